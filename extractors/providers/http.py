"""The HTTP transport of the network providers: rate limit, bounded retries, redaction.

Every request goes through :meth:`HttpTransport.request`, which

* waits for the rate limiter before *each* attempt (retries included);
* retries, at most ``RetryPolicy.max_attempts`` times in all, on 5xx, timeouts, connection
  errors, truncated bodies (fewer bytes than ``Content-Length``), 429 (waiting ``Retry-After`` /
  ``RateLimit-Reset`` when given, bounded by ``max_retry_after_s``) and bodies that fail the
  caller's check (e.g. an HTML/Cloudflare page where JSON is expected → ``provider_body``);
* returns any other answer (2xx, 3xx not followed, 4xx) to the caller, who maps it;
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
from extractors.providers.ratelimit import NoLimit, RateLimiter, RetryPolicy, retry_after_seconds

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

    def text_excerpt(self, n: int = 200) -> str:
        return self.content[:n].decode("utf-8", "replace").replace("\n", " ").strip()


RETRYABLE_STATUS = frozenset({500, 502, 503, 504, 520, 521, 522, 523, 524, 525, 526, 527, 529, 530})


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


class HttpTransport:
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
        # Redirects are followed by hand, same origin only: an Api-Key header must never follow a
        # redirect to another host (httpx strips only Authorization on cross-origin redirects).
        self._client = httpx.Client(
            timeout=httpx.Timeout(timeout_s), follow_redirects=False,
            headers={"User-Agent": user_agent}, transport=transport, trust_env=False,
        )
        #: counters for tests and build summaries: attempts, retries by reason, waits
        self.stats: dict[str, float] = {}
        self._stats_lock = threading.Lock()

    def close(self) -> None:
        self._client.close()

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
    ) -> HttpResult:
        """One logical request with bounded retries; see the module docstring."""
        policy = self.policy
        waits: list[float] = []
        last_reason, last_detail = "network", "no attempt made"
        for attempt in range(1, policy.max_attempts + 1):
            waited = self.limiter.acquire()
            if waited:
                self._count("rate_wait_s", waited)
            self._count("attempts")
            retry_wait: float | None = None
            try:
                result = self._send(method, url, params=params, json_body=json_body, headers=headers,
                                    attempt=attempt)
            except _Retryable as exc:
                last_reason, last_detail = exc.reason, exc.detail
            else:
                result.waits = waits
                status = result.status
                if status == 429:
                    last_reason = "rate_limited"
                    asked = retry_after_seconds(result.headers)
                    last_detail = f"HTTP 429 ({result.text_excerpt(100)!r})"
                    if asked is not None and asked > policy.max_retry_after_s:
                        raise ProviderError("rate_limited", self.redact(
                            f"{what}: HTTP 429 asks to wait {asked:.0f}s (more than the "
                            f"{policy.max_retry_after_s:.0f}s allowed)"), retryable=True)
                    retry_wait = asked
                elif status in RETRYABLE_STATUS:
                    last_reason, last_detail = "server_error", f"HTTP {status} ({result.text_excerpt(100)!r})"
                elif 200 <= status < 300 and check is not None and (bad := check(result)) is not None:
                    last_reason, last_detail = bad
                else:
                    return result
            self._count(f"retry_{last_reason}")
            log.info("%s: %s attempt %d/%d failed: %s: %s", self.name, what, attempt, policy.max_attempts,
                     last_reason, self.redact(last_detail))
            if attempt == policy.max_attempts:
                break
            delay = retry_wait if retry_wait is not None else policy.backoff(attempt - 1, self.rng)
            if retry_wait is not None:
                delay += self.rng.uniform(0, 0.1)  # a little jitter so parallel clients spread out
            waits.append(delay)
            self._count("backoff_s", delay)
            self.sleep(delay)
        raise ProviderError(last_reason, self.redact(
            f"{what}: gave up after {policy.max_attempts} attempts; last: {last_detail}"), retryable=True)

    def _send(self, method: str, url: str, *, params, json_body, headers, attempt: int) -> HttpResult:
        shown = "?"
        try:
            request = self._client.build_request(method, url, params=params, json=json_body, headers=headers)
            origin = (request.url.scheme, request.url.host, request.url.port)
            shown = self.redact(request.url)
            log.debug("%s: %s %s (attempt %d)", self.name, method, shown, attempt)
            response = self._client.send(request, stream=True)
            hops = 0
            while response.is_redirect and method in ("GET", "HEAD"):
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
        except httpx.TimeoutException as exc:
            raise _Retryable("timeout", self.redact(f"{method} {shown}: {type(exc).__name__}")) from None
        except httpx.RemoteProtocolError as exc:
            text = str(exc)
            reason = "truncated" if ("incomplete" in text or "complete message body" in text) else "network"
            raise _Retryable(reason, self.redact(f"{method} {shown}: {type(exc).__name__}: {text}")) from None
        except (httpx.InvalidURL, httpx.UnsupportedProtocol) as exc:
            raise ProviderError("invalid_query", self.redact(f"{method} {shown}: {type(exc).__name__}: {exc}")) from None
        except httpx.TransportError as exc:
            raise _Retryable("network", self.redact(f"{method} {shown}: {type(exc).__name__}: {exc}")) from None
        content = b"".join(chunks)
        result = HttpResult(status=response.status_code, headers=response.headers, content=content,
                            url=self.redact(response.url), attempts=attempt)
        declared = response.headers.get("content-length")
        if (declared and declared.strip().isdigit() and not response.headers.get("content-encoding")
                and method != "HEAD" and int(declared) != len(content)):
            raise _Retryable("truncated", f"{method} {shown}: {len(content)} of {declared} bytes")
        log.debug("%s: %s %s -> %d (%d bytes)", self.name, method, shown, result.status, len(content))
        return result


class _Retryable(Exception):
    def __init__(self, reason: str, detail: str):
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


def error_message(result: HttpResult) -> str:
    """The ``message``/``error`` of a JSON error body, else a short excerpt."""
    try:
        data = json.loads(result.content.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError):
        return result.text_excerpt(160)
    if isinstance(data, dict):
        for key in ("message", "error", "errors"):
            if data.get(key):
                return str(data[key])[:300]
    return result.text_excerpt(160)
