"""``kubesched config``: configuration chores.

``main(argv)`` takes the arguments after ``kubesched config``::

    kubesched config migrate --policy FILE [--config FILE] [--output FILE]

``migrate`` turns a removed scheduler Policy file (and the old configuration that
referenced it through ``algorithmSource``) into the equivalent
``kubescheduler.config.k8s.io/v1`` configuration, printed (or written to ``--output``);
what has no v1 equivalent is listed on stderr and as comments at the top of the output.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from kubesched.config import ConfigError
from kubesched.config.migrate import migrate_files

EXIT_USAGE = 2


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``kubesched config``."""
    parser = argparse.ArgumentParser(prog="kubesched config", description="Configuration chores.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    mig = sub.add_parser(
        "migrate",
        help="write the kubescheduler.config.k8s.io/v1 equivalent of a removed Policy file",
    )
    mig.add_argument("--policy", required=True, help="the Policy file (kind: Policy, JSON or YAML)")
    mig.add_argument(
        "--config", help="the old configuration whose algorithmSource named the Policy"
    )
    mig.add_argument("--output", "-o", help="write here instead of standard output")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``kubesched config``; returns the exit code."""
    args = build_parser().parse_args(argv)
    try:
        migration = migrate_files(args.policy, args.config)
    except ConfigError as err:
        print(str(err), file=sys.stderr)
        return EXIT_USAGE
    text = migration.render()
    for note in migration.notes:
        print(f"kubesched config migrate: not carried over: {note}", file=sys.stderr)
    if args.output:
        try:
            Path(args.output).write_text(text, encoding="utf-8")
        except OSError as err:
            print(f"kubesched config: error: {args.output}: {err.strerror or err}", file=sys.stderr)
            return EXIT_USAGE
    else:
        sys.stdout.write(text)
    return 0
