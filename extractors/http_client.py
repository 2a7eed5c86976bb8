"""The one HTTP client layer of every remote source: retry policy, rate limits, Retry-After,
failure classification and the retry loop (built on ``tenacity``).

Who uses it: the subtitle providers (:mod:`extractors.providers.opensubtitles`,
:mod:`extractors.providers.subdl`, through the httpx transport
:class:`extractors.providers.http.HttpTransport`), the polite page fetcher
(:mod:`extractors.sources.fetch`, same transport), the Internet Archive client
(:mod:`extractors.ia`, whose ``internetarchive`` session keeps its ``requests`` transport but
retries through :func:`call_with_retries`) and the Gemini clients (:mod:`extractors.gemini_pages`,
:mod:`extractors.gemini_curation`: ``google-genai`` keeps its transport and its own tenacity loop,
configured from a :class:`RetryPolicy` by :func:`genai_http_options`).

* :class:`RetryPolicy` — attempts, exponential backoff (base, cap, optional "equal jitter"), the
  longest ``Retry-After`` honoured (a server asking for more fails the call at once), which HTTP
  statuses are retried.
* :class:`TokenBucket` (and :class:`NoLimit`, :class:`PrefectRateLimit`,
  :class:`CombinedLimiter`) — rate limits; one token per request, retries included.
* :func:`retry_after_seconds` — ``Retry-After`` (seconds or HTTP date), else ``RateLimit-Reset``.
* :func:`status_reason`, :func:`transport_reason`, :func:`is_transport_error` — one
  classification of failures into the reason codes of :mod:`extractors.providers.errors`.
* :func:`call_with_retries` — the retry loop: an attempt raises :class:`AttemptFailed` to be
  retried; when the attempts are spent, or a ``Retry-After`` is longer than allowed, the loop
  raises :class:`RetriesExhausted`, which each client turns into its own typed error.

No timing is hidden: ``sleep``, ``clock`` and ``rng`` are injectable everywhere.
"""

from __future__ import annotations

import random
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import Any, Protocol, TypeVar

import tenacity

from extractors.providers.errors import ProviderError

T = TypeVar("T")

#: 5xx answers worth another attempt (Cloudflare's 52x included); 429 is added by the policy
SERVER_RETRY_STATUSES = frozenset({500, 502, 503, 504, 520, 521, 522, 523, 524, 525, 526, 527, 529, 530})
#: what the providers retry by default
DEFAULT_RETRY_STATUSES = SERVER_RETRY_STATUSES | {429}
#: what the review-site fetcher retries
PAGE_RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
#: what google-genai retries (its documented default set)
GENAI_RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
#: every 5xx and 429 (the Internet Archive client)
ANY_SERVER_RETRY_STATUSES = frozenset({429, *range(500, 600)})


# --------------------------------------------------------------------------------------------
# Retry policy
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RetryPolicy:
    """Bounded retries with exponential backoff.

    ``max_attempts`` counts every request of one logical call, the first included, whatever the
    reason of the retry. Retry ``n`` (0-based) waits ``min(backoff_max_s, backoff_base_s * 2**n)``
    — with ``jitter``, half of it fixed and half uniformly random ("equal jitter"). An answer with
    ``Retry-After`` waits at least that long (plus up to 0.1 s of jitter so parallel clients spread
    out); one asking for more than ``max_retry_after_s`` is not waited for: the call fails at once.
    ``clamp_retry_after``: never fail for a long ``Retry-After``, wait at most ``backoff_max_s``
    instead (the Internet Archive client's behaviour). ``retry_statuses``: the HTTP statuses
    retried (any other answer goes back to the caller).
    """

    max_attempts: int = 6
    backoff_base_s: float = 0.5
    backoff_max_s: float = 8.0
    max_retry_after_s: float = 120.0
    jitter: bool = True
    clamp_retry_after: bool = False
    retry_statuses: frozenset[int] = field(default=DEFAULT_RETRY_STATUSES)

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be >= 1")
        if self.backoff_base_s < 0 or self.backoff_max_s < 0 or self.max_retry_after_s < 0:
            raise ValueError("delays must be >= 0")

    def ceiling(self, retry_no: int) -> float:
        return min(self.backoff_max_s, self.backoff_base_s * (2 ** min(retry_no, 30)))

    def backoff(self, retry_no: int, rng: random.Random | None = None) -> float:
        """Delay before retry ``retry_no`` (0-based) when the server did not say how long."""
        ceiling = self.ceiling(retry_no)
        if not self.jitter:
            return ceiling
        return ceiling / 2 + (rng or random).uniform(0, ceiling / 2)

    def delay(self, retry_no: int, retry_after: float | None = None, rng: random.Random | None = None) -> float:
        """Delay before retry ``retry_no``: the backoff, or at least ``retry_after`` when given."""
        backoff = self.backoff(retry_no, rng)
        if retry_after is None:
            return backoff
        if self.clamp_retry_after:
            return min(max(retry_after, backoff), self.backoff_max_s)
        spread = (rng or random).uniform(0, 0.1) if self.jitter else 0.0
        return max(retry_after + spread, backoff)

    def refuses_wait(self, retry_after: float | None) -> bool:
        """Whether a server asks to wait longer than this policy allows (the call fails at once)."""
        return not self.clamp_retry_after and retry_after is not None and retry_after > self.max_retry_after_s

    def retries_status(self, status: int) -> bool:
        return status in self.retry_statuses


# --------------------------------------------------------------------------------------------
# Rate limiters
# --------------------------------------------------------------------------------------------
class RateLimiter(Protocol):
    def acquire(self) -> float:
        """Block until one request may be sent; return the seconds waited."""


class NoLimit:
    def acquire(self) -> float:
        return 0.0


class TokenBucket:
    """``rate`` tokens per second, at most ``burst`` stored; one token per request.

    Default 4 requests/s, burst 1: requests are spaced evenly, so no one-second window ever holds
    more than 5 — the OpenSubtitles limit per IP. Callers reserve a token under a lock (the
    balance may go negative: that is the queue) and sleep outside it, so concurrent callers are
    served in order without busy waiting.
    """

    def __init__(
        self,
        rate: float = 4.0,
        burst: float = 1.0,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ):
        if rate <= 0:
            raise ValueError("rate must be > 0 (use NoLimit for no limit)")
        if burst < 1:
            raise ValueError("burst must be >= 1")
        self.rate = float(rate)
        self.burst = float(burst)
        self._clock = clock
        self._sleep = sleep
        self._tokens = self.burst
        self._last = clock()
        self._lock = threading.Lock()

    def reserve(self) -> float:
        """Take a token; return how long the caller must wait before using it."""
        with self._lock:
            now = self._clock()
            self._tokens = min(self.burst, self._tokens + (now - self._last) * self.rate)
            self._last = now
            self._tokens -= 1.0
            return 0.0 if self._tokens >= 0 else -self._tokens / self.rate

    def acquire(self) -> float:
        wait = self.reserve()
        if wait > 0:
            self._sleep(wait)
        return wait


class PrefectRateLimit:
    """A Prefect global concurrency limit (with slot decay) used as a cross-process rate limit,
    so several processes behind one IP share one budget. It needs a Prefect API and a limit
    created with a slot decay, e.g. ``prefect gcl create opensubtitles-api --limit 1
    --slot-decay-per-second 4``. ``strict=True``: a missing limit is an error (a typo must not
    silently disable limiting)."""

    def __init__(self, name: str, *, timeout_s: float = 120.0, strict: bool = True,
                 clock: Callable[[], float] = time.monotonic):
        if not name:
            raise ValueError("a Prefect concurrency limit name is required")
        self.name = name
        self.timeout_s = timeout_s
        self.strict = strict
        self._clock = clock

    def acquire(self) -> float:
        from prefect.concurrency.sync import rate_limit

        start = self._clock()
        try:
            rate_limit(self.name, occupy=1, timeout_seconds=self.timeout_s, strict=self.strict)
        except TimeoutError as exc:
            raise ProviderError("rate_limited", f"Prefect rate limit {self.name!r}: no slot within "
                                f"{self.timeout_s:.0f}s", retryable=True) from exc
        except Exception as exc:  # ConcurrencySlotAcquisitionError, API unreachable, ...
            raise ProviderError("rate_limited", f"Prefect rate limit {self.name!r} unusable: "
                                f"{type(exc).__name__}: {exc}", retryable=False) from None
        return self._clock() - start


class CombinedLimiter:
    """Acquire every limiter in turn (the local bucket first, then a shared Prefect limit)."""

    def __init__(self, limiters: Sequence[RateLimiter]):
        self.limiters = list(limiters)

    def acquire(self) -> float:
        return sum(limiter.acquire() for limiter in self.limiters)


def provider_limiter(requests_per_second: float | None, burst: float = 1.0,
                     prefect_limit: str | None = None) -> RateLimiter:
    """The limiter of a network provider: a local token bucket (default 4/s), plus a shared
    Prefect rate limit when one is named."""
    bucket = TokenBucket(4.0 if requests_per_second is None else float(requests_per_second), burst)
    return CombinedLimiter([bucket, PrefectRateLimit(prefect_limit)]) if prefect_limit else bucket


# --------------------------------------------------------------------------------------------
# Classification
# --------------------------------------------------------------------------------------------
def retry_after_seconds(headers: Mapping[str, str], now: datetime | None = None) -> float | None:
    """Seconds a 429/503 answer asks us to wait: ``Retry-After`` (seconds or HTTP date), else
    ``RateLimit-Reset`` / ``X-RateLimit-Reset`` (seconds). None when absent or unparseable."""
    lower = {k.lower(): v for k, v in headers.items()}
    value = lower.get("retry-after")
    if value is not None:
        value = value.strip()
        if re.fullmatch(r"\d+(\.\d+)?", value):
            return float(value)
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            when = None
        if when is not None:
            if when.tzinfo is None:
                when = when.replace(tzinfo=timezone.utc)
            return max(0.0, (when - (now or datetime.now(timezone.utc))).total_seconds())
    for name in ("ratelimit-reset", "x-ratelimit-reset"):
        value = lower.get(name)
        if value is not None and re.fullmatch(r"\s*\d+(\.\d+)?\s*", value):
            return float(value)
    return None


def status_reason(status: int) -> str:
    """The reason code of an HTTP status nobody handled specially (providers map their own
    specials — quota refusals, 400/422 — before asking)."""
    if status == 429:
        return "rate_limited"
    if status >= 500:
        return "server_error"
    if status in (404, 410):
        return "not_found"
    if status in (401, 403):
        return "auth_failed"
    return "bad_response"


def _classes(exc: BaseException) -> set[tuple[str, str]]:
    return {(k.__module__.split(".")[0], k.__name__) for k in type(exc).__mro__}


_TRANSPORT_LIBS = ("httpx", "httpx2", "httpcore", "aiohttp", "requests", "urllib3")


def is_transport_error(exc: BaseException) -> bool:
    """Connection/timeout failures of whichever HTTP library the Gemini client uses (``httpx``,
    the ``httpx2`` fork google-genai 3.x ships, or aiohttp), recognised by class hierarchy."""
    if isinstance(exc, (OSError, TimeoutError)):
        return True
    return any(mod in ("httpx", "httpx2", "httpcore", "aiohttp") and name in (
        "TransportError", "RequestError", "HTTPError", "TimeoutException", "ClientError")
        for mod, name in _classes(exc))


def transport_reason(exc: BaseException) -> str | None:
    """``timeout``, ``truncated`` or ``network`` for a transport failure of httpx or requests (a
    body cut short, a connect/read timeout, a refused/reset connection); None for anything else."""
    names = {name for mod, name in _classes(exc) if mod in _TRANSPORT_LIBS}
    if names & {"TimeoutException", "Timeout"}:
        return "timeout"
    if names & {"ChunkedEncodingError", "ContentDecodingError"}:
        return "truncated"
    if "RemoteProtocolError" in names:
        text = str(exc)
        return "truncated" if ("incomplete" in text or "complete message body" in text) else "network"
    if names & {"TransportError", "ConnectionError"}:
        return "network"
    return None


# --------------------------------------------------------------------------------------------
# The retry loop
# --------------------------------------------------------------------------------------------
class AttemptFailed(Exception):
    """Raised by one attempt that may be retried: ``reason`` (a reason code), ``detail`` (already
    safe to log), the server's ``retry_after`` (seconds) and ``status`` when there was an answer."""

    def __init__(self, reason: str, detail: str, *, retry_after: float | None = None, status: int | None = None):
        super().__init__(detail)
        self.reason = reason
        self.detail = detail
        self.retry_after = retry_after
        self.status = status


class RetriesExhausted(Exception):
    """The loop gave up: ``last`` is the last :class:`AttemptFailed`, ``attempts`` how many were
    made; ``wait_refused`` when the server asked to wait longer than the policy allows."""

    def __init__(self, last: AttemptFailed, attempts: int, *, wait_refused: bool):
        super().__init__(last.detail)
        self.last = last
        self.attempts = attempts
        self.wait_refused = wait_refused


def _failure(state: tenacity.RetryCallState) -> AttemptFailed:
    exc = state.outcome.exception() if state.outcome is not None else None
    assert isinstance(exc, AttemptFailed)
    return exc


def call_with_retries(
    attempt: Callable[[int], T],
    policy: RetryPolicy,
    *,
    sleep: Callable[[float], None] = time.sleep,
    rng: random.Random | None = None,
    on_failure: Callable[[AttemptFailed, int, bool], None] | None = None,
    on_wait: Callable[[float], None] | None = None,
) -> T:
    """Call ``attempt(n)`` (``n`` = 1, 2, …) until it returns, at most ``policy.max_attempts``
    times. ``attempt`` raises :class:`AttemptFailed` for a retryable failure; anything else it
    raises propagates at once. ``on_failure(failure, n, final)`` hears of every failed attempt,
    ``on_wait(seconds)`` of every wait. Raises :class:`RetriesExhausted` when it gives up."""
    rng = rng or random.Random()

    def refused(state: tenacity.RetryCallState) -> bool:
        return policy.refuses_wait(_failure(state).retry_after)

    def stop(state: tenacity.RetryCallState) -> bool:
        return state.attempt_number >= policy.max_attempts or refused(state)

    def wait(state: tenacity.RetryCallState) -> float:
        return policy.delay(state.attempt_number - 1, _failure(state).retry_after, rng)

    def after(state: tenacity.RetryCallState) -> None:
        if on_failure is not None:
            on_failure(_failure(state), state.attempt_number, stop(state))

    def before_sleep(state: tenacity.RetryCallState) -> None:
        if on_wait is not None and state.next_action is not None:
            on_wait(state.next_action.sleep)

    def give_up(state: tenacity.RetryCallState) -> T:
        raise RetriesExhausted(_failure(state), state.attempt_number, wait_refused=refused(state))

    count = 0

    def one() -> T:
        nonlocal count
        count += 1
        return attempt(count)

    retrying = tenacity.Retrying(
        sleep=sleep, stop=stop, wait=wait, retry=tenacity.retry_if_exception_type(AttemptFailed),
        after=after, before_sleep=before_sleep, retry_error_callback=give_up)
    return retrying(one)


# --------------------------------------------------------------------------------------------
# google-genai
# --------------------------------------------------------------------------------------------
def genai_policy(attempts: int, initial_delay_s: float, max_delay_s: float) -> RetryPolicy:
    """The policy of a Gemini client: no jitter, google-genai's retried statuses."""
    return RetryPolicy(max_attempts=max(1, attempts), backoff_base_s=initial_delay_s,
                       backoff_max_s=max(initial_delay_s, max_delay_s), jitter=False,
                       retry_statuses=GENAI_RETRY_STATUSES)


def genai_http_options(policy: RetryPolicy, *, base_url: str | None, api_version: str | None,
                       timeout_s: float) -> Any:
    """``google.genai.types.HttpOptions`` whose retries follow ``policy`` (google-genai keeps its
    own transport and tenacity loop; it does not read ``Retry-After`` — docs/providers.md)."""
    from google.genai import types

    retry = types.HttpRetryOptions(
        attempts=policy.max_attempts, initial_delay=policy.backoff_base_s, max_delay=policy.backoff_max_s,
        exp_base=2.0, jitter=1.0 if policy.jitter else 0.0, http_status_codes=sorted(policy.retry_statuses))
    return types.HttpOptions(base_url=base_url, api_version=api_version, timeout=int(timeout_s * 1000),
                             retry_options=retry)
