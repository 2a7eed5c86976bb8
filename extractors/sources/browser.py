"""The browser fallback for challenged pages (``sources.browser_fallback = true``; docs/sources.md
"Crawl"): Playwright driving Debian's Chromium (``/usr/bin/chromium`` from apt — never
``playwright install``).

A page that answered the plain fetcher with a bot wall (AWS WAF: ``x-amzn-waf-action``, or 202
with an empty body) is loaded in a real browser, which runs the challenge's script (it sets a
cookie, e.g. ``aws-waf-token``, and reloads); the page that finally loads is returned. One browser
context serves the whole crawl, so a cookie won once is reused by the next pages.

What is stored: the bytes the server sent for the final navigation (``response.body()``), so a
page fetched by the browser is still byte-for-byte what the site served; when Chromium cannot
give them (rare: a navigation answered from its own cache), the rendered DOM
(``page.content()``) instead. The robots.txt check and the rate budget stay with
:class:`extractors.sources.fetch.PoliteFetcher` (the crawl asks it before calling here); the
challenge's own reload is one extra request the budget does not see.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync")


@dataclass
class BrowserPage:
    url: str
    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str | None = None
    final_url: str = ""
    navigations: int = 0
    rendered: bool = False  # the body is page.content(), not the served bytes


class BrowserUnavailable(RuntimeError):
    """Playwright or the Chromium binary is missing."""


class BrowserFetcher:
    """Load pages in headless Chromium; started on the first :meth:`fetch`, closed by :meth:`close`.

    ``timeout_s``: the longest one page may take, challenge round trips included;
    ``max_navigations``: how many loads (the challenge page, its reloads) are followed before the
    page counts as still challenged."""

    def __init__(self, user_agent: str | None = None, *, executable: str | Path = CHROMIUM,
                 timeout_s: float = 30.0, max_navigations: int = 4):
        self.user_agent = user_agent
        self.executable = str(executable)
        self.timeout_s = float(timeout_s)
        self.max_navigations = max(1, int(max_navigations))
        self._pw: Any = None
        self._browser: Any = None
        self._context: Any = None
        self.pages_fetched = 0

    # -- lifecycle -----------------------------------------------------------------------------
    def start(self) -> BrowserFetcher:
        if self._context is not None:
            return self
        if not Path(self.executable).exists():
            raise BrowserUnavailable(f"no Chromium at {self.executable} (Debian: apt-get install chromium)")
        try:
            from playwright.sync_api import sync_playwright
        except ImportError as exc:
            raise BrowserUnavailable("the browser fallback needs the playwright package") from exc
        self._pw = sync_playwright().start()
        try:
            self._browser = self._pw.chromium.launch(executable_path=self.executable, args=list(CHROMIUM_ARGS))
            kw: dict[str, Any] = {}
            if self.user_agent:
                kw["user_agent"] = self.user_agent
            self._context = self._browser.new_context(**kw)
        except BaseException:
            self.close()
            raise
        return self

    def close(self) -> None:
        for obj, method in ((self._context, "close"), (self._browser, "close"), (self._pw, "stop")):
            if obj is not None:
                try:
                    getattr(obj, method)()
                except Exception:  # already gone
                    pass
        self._context = self._browser = self._pw = None

    def __enter__(self) -> BrowserFetcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- pages ---------------------------------------------------------------------------------
    def fetch(self, url: str) -> BrowserPage:
        """The page at ``url`` once any script-driven challenge has passed (or the last answer)."""
        self.start()
        page = self._context.new_page()
        responses: list[Any] = []
        page.on("response", lambda r: responses.append(r) if r.request.is_navigation_request()
                and r.frame == page.main_frame else None)
        timeout_ms = self.timeout_s * 1000
        deadline = time.monotonic() + self.timeout_s
        try:
            page.goto(url, wait_until="load", timeout=timeout_ms)
            # the challenge's script sets its cookie and reloads: wait for the next navigation
            # answer until one is not a challenge, the navigations are spent or time is up
            while (responses and _challenged(responses[-1]) and len(responses) < self.max_navigations
                   and time.monotonic() < deadline):
                before = len(responses)
                while len(responses) == before and time.monotonic() < deadline:
                    page.wait_for_timeout(50)
                if len(responses) > before:
                    left = max(1.0, (deadline - time.monotonic()) * 1000)
                    try:
                        page.wait_for_load_state("load", timeout=left)
                    except Exception:
                        break
            last = responses[-1] if responses else None
            status = last.status if last is not None else 0
            headers = {k.lower(): v for k, v in (last.headers.items() if last is not None else ())}
            body, rendered = b"", False
            if last is not None:
                try:
                    body = last.body()
                except Exception:
                    body = b""
            if not body and status == 200:
                body, rendered = page.content().encode("utf-8"), True
            self.pages_fetched += 1
            return BrowserPage(url=url, status=status, body=body, headers=headers,
                               content_type=headers.get("content-type"), final_url=page.url,
                               navigations=len(responses), rendered=rendered)
        finally:
            page.close()


def _challenged(response: Any) -> bool:
    from extractors.sources.fetch import is_waf_challenge

    headers = {k.lower(): v for k, v in response.headers.items()}
    # a 202 in a browser carries the challenge's script (its body is not empty): 202 alone counts
    return response.status == 202 or is_waf_challenge(response.status, headers, b"x")
