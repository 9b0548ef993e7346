"""A real browser for the HTML report: Debian's Chromium driven by Playwright.

``./dev test`` installs Chromium with apt-get when it is missing. If it is still missing,
or will not start, every browser test fails with the reason: a report nobody could open
must not pass as tested. The page runs with the network blocked: every request that is
not for the file itself is aborted and recorded.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from playwright.sync_api import Browser, Page, Route, sync_playwright

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]


@pytest.fixture
def browser() -> Iterator[Browser]:
    # One browser per test: Playwright's sync API keeps an event loop running in this
    # thread while it is open, and tests that follow in the same worker call asyncio.run.
    if not CHROMIUM.exists():
        pytest.fail(
            f"{CHROMIUM} is missing: ./dev test installs it (apt-get install -y chromium); "
            "the HTML report cannot be tested without a browser",
            pytrace=False,
        )
    with sync_playwright() as pw:
        try:
            launched = pw.chromium.launch(
                executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
            )
        except Exception as err:  # the reason is the test's failure message
            pytest.fail(f"{CHROMIUM} did not start: {err}", pytrace=False)
        yield launched
        launched.close()


@dataclasses.dataclass
class OpenedReport:
    """A report loaded in the browser, with what it tried to do."""

    page: Page
    data: dict[str, Any]
    console_errors: list[str]
    requests: list[str]
    dialogs: list[str]

    def attrs(self, testid: str, *names: str, within: str = "") -> list[dict[str, str | None]]:
        """Each element with ``data-testid=testid`` (inside the CSS selector ``within``):
        the named attributes, read in one round trip."""
        selector = f"{within} [data-testid={testid}]".strip()
        found: list[dict[str, str | None]] = self.page.evaluate(
            """([selector, names]) => Array.from(document.querySelectorAll(selector)).map(
                el => Object.fromEntries(names.map(n => [n, el.getAttribute(n)])))""",
            [selector, list(names)],
        )
        return found


@pytest.fixture
def open_report(browser: Browser) -> Iterator[Any]:
    contexts = []

    def opener(path: Path) -> OpenedReport:
        context = browser.new_context(java_script_enabled=True)
        contexts.append(context)
        page = context.new_page()
        errors: list[str] = []
        requests: list[str] = []
        dialogs: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.on(
            "request",
            lambda r: requests.append(r.url) if not r.url.startswith("file://") else None,
        )

        def block(route: Route) -> None:
            if route.request.url.startswith("file://"):
                route.continue_()
            else:
                route.abort()

        context.route("**/*", block)
        page.goto(path.resolve().as_uri(), wait_until="load")
        raw = page.locator("#kubesched-report-data").text_content()
        assert raw is not None
        return OpenedReport(page, json.loads(raw), errors, requests, dialogs)

    yield opener
    for context in contexts:
        context.close()


def write(path: Path, *objs: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump_all(list(objs)))
    return path
