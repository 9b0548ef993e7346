"""``kubesched report DOC.json -o FILE.html``: render a saved report document as HTML
(the same page ``--report FILE.html`` writes beside ``--output``)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from kubesched.cli.htmlreport import ReportError, load_document, write_html


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``report`` on the ``kubesched`` parser."""
    rep = sub.add_parser(
        "report", help="render a lab report document (--output json) as one HTML file"
    )
    rep.add_argument(
        "document",
        metavar="DOC.json",
        help="what simulate, explain, compare or capacity printed with --output json",
    )
    rep.add_argument("--output", "-o", required=True, metavar="FILE.html", help="the page to write")
    rep.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Read, validate and render the document."""
    data = load_document(Path(args.document))
    write_html(data, Path(args.output))
    return 0


__all__: Sequence[str] = ("ReportError", "add_parser", "run")
