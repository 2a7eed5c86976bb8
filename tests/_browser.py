"""Headless Chromium (Debian's /usr/bin/chromium driven by Playwright) for the tests of the pages
the project writes (tests/test_report.py, tests/test_release_stats.py): one page opened from a
file URL, with its console messages, page errors and requests recorded."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@dataclass
class PageLog:
    console: list[tuple[str, str]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)

    def assert_clean(self, url: str) -> None:
        """No console error or warning, no page error or failed request, and ``url`` the only request."""
        bad = [m for m in self.console if m[0] in ("error", "warning")]
        assert not bad, bad
        assert not self.errors, self.errors
        assert self.requests == [url], self.requests


@contextmanager
def open_page(path: Path, viewport: dict[str, int] | None = None) -> Iterator[tuple[Any, PageLog]]:
    """(page, log) of ``path`` loaded in headless Chromium; the browser closes on exit."""
    from playwright.sync_api import sync_playwright

    assert Path(CHROMIUM).exists(), "Debian chromium is installed by scripts/setup.sh (make setup)"
    log = PageLog()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport=viewport or {"width": 1400, "height": 1000})
            page.on("console", lambda m: log.console.append((m.type, m.text)))
            page.on("pageerror", lambda exc: log.errors.append(str(exc)))
            page.on("requestfailed", lambda r: log.errors.append(f"request failed: {r.url}"))
            page.on("request", lambda r: log.requests.append(r.url))
            page.goto(path.as_uri(), wait_until="load")
            yield page, log
        finally:
            browser.close()
