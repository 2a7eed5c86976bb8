"""The httpx transport of the HTTP client layer (:mod:`extractors.http_client`): one request with
rate limit, bounded retries and redaction, for the subtitle providers and the page fetcher.

Every request goes through :meth:`HttpTransport.request`, which

* waits for the rate limiter before *each* attempt (retries included);
* retries through :func:`extractors.http_client.call_with_retries`, at most
  ``RetryPolicy.max_attempts`` times in all, on the policy's retried statuses (5xx, 429),
  timeouts, connection errors, truncated bodies (fewer bytes than ``Content-Length``) and bodies
  that fail the caller's check (e.g. an HTML/Cloudflare page where JSON is expected →
  ``provider_body``), waiting ``Retry-After`` / ``RateLimit-Reset`` when given (a longer wait
  than ``max_retry_after_s`` fails at once);
* returns any other answer (2xx, 3xx not followed, 4xx) to the caller, who maps it;
* raises :class:`HttpGaveUp` (a :class:`ProviderError` with the reason code of the last failure)
  when it gives up;
* reads at most ``max_body_bytes`` of a body;
* logs and raises only text that went through the :class:`Redactor`, and never chains the
  underlying httpx exception (its message can hold a URL with an API key).

httpx itself logs every request URL at INFO on the ``httpx`` logger; SubDL puts its API key in the
query string, so a :class:`logging.Filter` on the httpx/httpcore loggers redacts every registered
secret from their records too.
"""

from __future__ import annotations

import json
import logging
import random
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, quote_plus

import httpx

from extractors.providers.errors import ProviderError
from extractors.http_client import (AttemptFailed, NoLimit, RateLimiter, RetriesExhausted, RetryPolicy,
                                    call_with_retries, provider_limiter, retry_after_seconds, status_reason,
                                    transport_reason)

log = logging.getLogger(__name__)

MASK = "***"


# --------------------------------------------------------------------------------------------
# Redaction
# --------------------------------------------------------------------------------------------
class Redactor:
    """Masks every registered secret (and its URL-/JSON-escaped forms) in a text."""

    def __init__(self, secrets: Iterable[str | None] = ()):
        self._variants: set[str] = set()
        self._lock = threading.Lock()
        for s in secrets:
            self.add(s)
        _REDACTORS.add(self)

    def add(self, secret: str | None) -> None:
        if not secret or len(secret) < 3:
            return
        variants = {secret, quote(secret, safe=""), quote_plus(secret), json.dumps(secret)[1:-1]}
        with self._lock:
            self._variants.update(v for v in variants if v)

    def __call__(self, text: Any) -> str:
        out = str(text)
        with self._lock:
            variants = sorted(self._variants, key=len, reverse=True)
        for v in variants:
            if v in out:
                out = out.replace(v, MASK)
        return out

    def __repr__(self) -> str:
        return f"Redactor({len(self._variants)} variants)"


_REDACTORS: "weakref.WeakSet[Redactor]" = weakref.WeakSet()


def redact_all(text: Any) -> str:
    """Apply every live redactor (used by the log filter of third-party loggers)."""
    out = str(text)
    for r in list(_REDACTORS):
        out = r(out)
    return out


class _RedactingFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a broken record is not ours to fix; keep it out rather than leak
            return False
        clean = redact_all(message)
        if clean != message:
            record.msg, record.args = clean, None
        return True


_FILTER = _RedactingFilter()
_THIRD_PARTY_LOGGERS = ("httpx", "httpcore", "httpcore.http11", "httpcore.http2", "httpcore.connection",
                        "httpcore.proxy", "hpack", "urllib3.connectionpool", "opensubtitlescom.opensubtitles")


def install_log_filter() -> None:
    for name in _THIRD_PARTY_LOGGERS:
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)


# --------------------------------------------------------------------------------------------
# Transport
# --------------------------------------------------------------------------------------------
@dataclass
class HttpResult:
    status: int
    headers: httpx.Headers
    content: bytes
    url: str  # redacted
    attempts: int
    data: Any = None  # parsed JSON when the caller asked for it
    waits: list[float] = field(default_factory=list)

    def parsed_json(self) -> Any:
        """The body parsed as JSON (a BOM allowed); None when it is not JSON."""
        try:
            return json.loads(self.content.decode("utf-8-sig"))
        except (UnicodeDecodeError, ValueError):
            return None

    def text_excerpt(self, n: int = 200) -> str:
        return self.content[:n].decode("utf-8", "replace").replace("\n", " ").strip()


def looks_like_html(content: bytes, content_type: str | None = None) -> bool:
    head = content[:512].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if content_type and "html" in content_type.lower():
        return True
    return head.startswith((b"<!doctype html", b"<html", b"<head", b"<body", b"<?xml", b"<!--"))


def json_check(result: HttpResult) -> tuple[str, str] | None:
    """Body check for JSON endpoints: parse into ``result.data``; HTML or garbage → transient."""
    ctype = result.headers.get("content-type", "")
    if looks_like_html(result.content, ctype):
        return "provider_body", f"HTML page instead of JSON ({result.text_excerpt(120)!r})"
    try:
        result.data = json.loads(result.content.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError):
        return "provider_body", f"not JSON ({result.text_excerpt(120)!r})"
    return None


class HttpGaveUp(ProviderError):
    """A request that still failed when the retry policy gave up (always ``retryable``):
    ``status`` of the last answer (None after a transport failure), ``attempts`` made,
    ``last_detail`` (redacted) of the last failure; ``wait_refused`` when the server asked to wait
    longer than the policy allows."""

    def __init__(self, reason_code: str, detail: str, *, status: int | None, attempts: int, last_detail: str,
                 wait_refused: bool = False):
        super().__init__(reason_code, detail, retryable=True)
        self.status = status
        self.attempts = attempts
        self.last_detail = last_detail
        self.wait_refused = wait_refused


class TransportOwner:
    """``close()`` and the context-manager protocol of a client that owns an ``http`` transport."""

    http: HttpTransport

    def close(self) -> None:
        self.http.close()

    def __enter__(self):  # noqa: ANN204 - returns the subclass
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class HttpTransport:
    """httpx client of one remote service, every request through the layer's retry loop.

    ``headers``: sent with every request (besides the User-Agent). ``follow_redirects``: follow
    same-origin redirects of GET/HEAD here (at most ``max_redirects``); off, a 3xx is returned.
    """

    def __init__(
        self,
        *,
        name: str,
        redactor: Redactor,
        user_agent: str,
        timeout_s: float = 30.0,
        limiter: RateLimiter | None = None,
        policy: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
        max_body_bytes: int = 50 * 1024 * 1024,
        max_redirects: int = 5,
        follow_redirects: bool = True,
        headers: Mapping[str, str] | None = None,
        transport: httpx.BaseTransport | None = None,
    ):
        install_log_filter()
        self.name = name
        self.redact = redactor
        self.limiter = limiter or NoLimit()
        self.policy = policy or RetryPolicy()
        self.sleep = sleep
        self.rng = rng or random.Random()
        self.max_body_bytes = max_body_bytes
        self.timeout_s = timeout_s
        self.max_redirects = max_redirects
        self.follow_redirects = follow_redirects
        # Redirects are followed by hand, same origin only: an Api-Key header must never follow a
        # redirect to another host (httpx strips only Authorization on cross-origin redirects).
        self._client = httpx.Client(
            timeout=httpx.Timeout(timeout_s), follow_redirects=False,
            headers={"User-Agent": user_agent, **(headers or {})}, transport=transport, trust_env=False,
        )
        #: counters for tests and build summaries: attempts, retries (and by reason), waits
        self.stats: dict[str, float] = {}
        self._stats_lock = threading.Lock()

    def close(self) -> None:
        self._client.close()

    @property
    def client(self) -> httpx.Client:
        """The underlying client (same User-Agent and headers), for streamed reads the caller
        retries itself (extractors.sources.fetch: datasets streamed to disk)."""
        return self._client

    def __enter__(self) -> HttpTransport:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _count(self, key: str, value: float = 1) -> None:
        with self._stats_lock:
            self.stats[key] = self.stats.get(key, 0) + value

    # ------------------------------------------------------------------------------------------
    def request(
        self,
        method: str,
        url: str,
        *,
        what: str,
        params: Mapping[str, Any] | None = None,
        json_body: Any = None,
        headers: Mapping[str, str] | None = None,
        check: Callable[[HttpResult], tuple[str, str] | None] | None = None,
        limiter: RateLimiter | None = None,
        final: Callable[[HttpResult], bool] | None = None,
    ) -> HttpResult:
        """One logical request with bounded retries (see the module docstring); ``limiter``
        replaces the transport's own for this request (a per-site budget); an answer ``final``
        says is definitive (e.g. a 429 whose body names a *daily* limit) is returned to the
        caller at once instead of being retried."""
        policy = self.policy
        limiter = limiter or self.limiter
        waits: list[float] = []

        def attempt(n: int) -> HttpResult:
            waited = limiter.acquire()
            if waited:
                self._count("rate_wait_s", waited)
            self._count("attempts")
            result = self._send(method, url, params=params, json_body=json_body, headers=headers, attempt=n)
            result.waits = waits
            status = result.status
            if policy.retries_status(status) and not (final is not None and final(result)):
                raise AttemptFailed(status_reason(status), f"HTTP {status} ({result.text_excerpt(100)!r})",
                                    retry_after=retry_after_seconds(result.headers), status=status)
            if 200 <= status < 300 and check is not None and (bad := check(result)) is not None:
                raise AttemptFailed(*bad, status=status)
            return result

        def failed(f: AttemptFailed, n: int, final: bool) -> None:
            if policy.refuses_wait(f.retry_after):
                return
            self._count(f"retry_{f.reason}")
            log.info("%s: %s attempt %d/%d failed: %s: %s", self.name, what, n, policy.max_attempts,
                     f.reason, self.redact(f.detail))

        def waiting(delay: float) -> None:
            waits.append(delay)
            self._count("retries")
            self._count("backoff_s", delay)

        try:
            return call_with_retries(attempt, policy, sleep=self.sleep, rng=self.rng,
                                     on_failure=failed, on_wait=waiting)
        except RetriesExhausted as exc:
            last = exc.last
            status = f"HTTP {last.status}" if last.status is not None else last.reason
            if exc.wait_refused:
                detail = (f"{what}: {status} asks to wait {last.retry_after:.0f}s (more than the "
                          f"{policy.max_retry_after_s:.0f}s allowed)")
            else:
                detail = f"{what}: gave up after {exc.attempts} attempts; last: {last.detail}"
            raise HttpGaveUp(last.reason, self.redact(detail), status=last.status, attempts=exc.attempts,
                             last_detail=self.redact(last.detail), wait_refused=exc.wait_refused) from None

    def _send(self, method: str, url: str, *, params, json_body, headers, attempt: int) -> HttpResult:
        shown = "?"
        try:
            request = self._client.build_request(method, url, params=params, json=json_body, headers=headers)
            origin = (request.url.scheme, request.url.host, request.url.port)
            shown = self.redact(request.url)
            log.debug("%s: %s %s (attempt %d)", self.name, method, shown, attempt)
            response = self._client.send(request, stream=True)
            hops = 0
            while self.follow_redirects and response.is_redirect and method in ("GET", "HEAD"):
                target = response.next_request
                response.close()
                hops += 1
                if target is None or hops > self.max_redirects:
                    raise ProviderError("bad_response", self.redact(f"{method} {shown}: too many redirects"))
                if (target.url.scheme, target.url.host, target.url.port) != origin:
                    raise ProviderError("bad_response", self.redact(
                        f"{method} {shown}: redirect to another origin refused ({target.url.host})"))
                shown = self.redact(target.url)
                log.debug("%s: redirected to %s", self.name, shown)
                response = self._client.send(target, stream=True)
            try:
                chunks, size = [], 0
                for chunk in response.iter_bytes():
                    size += len(chunk)
                    if size > self.max_body_bytes:
                        raise ProviderError("bad_response", self.redact(
                            f"{method} {shown}: body larger than {self.max_body_bytes} bytes"))
                    chunks.append(chunk)
            finally:
                response.close()
        except (httpx.InvalidURL, httpx.UnsupportedProtocol) as exc:
            raise ProviderError("invalid_query", self.redact(f"{method} {shown}: {type(exc).__name__}: {exc}")) from None
        except httpx.TransportError as exc:
            reason = transport_reason(exc) or "network"
            text = "" if reason == "timeout" else f": {exc}"
            raise AttemptFailed(reason, self.redact(f"{method} {shown}: {type(exc).__name__}{text}")) from None
        content = b"".join(chunks)
        result = HttpResult(status=response.status_code, headers=response.headers, content=content,
                            url=self.redact(response.url), attempts=attempt)
        declared = response.headers.get("content-length")
        if (declared and declared.strip().isdigit() and not response.headers.get("content-encoding")
                and method != "HEAD" and int(declared) != len(content)):
            raise AttemptFailed("truncated", f"{method} {shown}: {len(content)} of {declared} bytes")
        log.debug("%s: %s %s -> %d (%d bytes)", self.name, method, shown, result.status, len(content))
        return result


def provider_transport(name: str, redactor: Redactor, user_agent: str, params: Mapping[str, Any], *,
                       timeout_s: float, burst: float, limiter: RateLimiter | None, retry: RetryPolicy | None,
                       sleep: Callable[[float], None] | None, seed: int | None, **kw: Any) -> HttpTransport:
    """The transport of a subtitle provider: its limiter (``params``: ``requests_per_second``,
    ``prefect_rate_limit``) unless one is given, the default policy unless ``retry``, a seeded
    jitter when ``seed``."""
    return HttpTransport(
        name=name, redactor=redactor, user_agent=user_agent, timeout_s=timeout_s,
        limiter=limiter or provider_limiter(params["requests_per_second"], burst, params["prefect_rate_limit"]),
        policy=retry or RetryPolicy(), sleep=sleep or time.sleep,
        rng=random.Random(seed) if seed is not None else None, **kw)


def error_message(result: HttpResult) -> str:
    """The ``message``/``error`` of a JSON error body, else a short excerpt."""
    data = result.parsed_json()
    if isinstance(data, dict):
        for key in ("message", "error", "errors"):
            if data.get(key):
                return str(data[key])[:300]
    return result.text_excerpt(160)
