"""Rate limiting, retry policy and download-quota bookkeeping shared by the network providers.

* :class:`TokenBucket` — a thread-safe token bucket (default 4 requests/s, burst 1: requests are
  spaced evenly, so no one-second window ever holds more than 5 — the OpenSubtitles limit per IP).
* :class:`PrefectRateLimit` — optionally, a Prefect *global concurrency limit* used as a rate
  limit (``prefect.concurrency.sync.rate_limit``), so several processes behind one IP share one
  budget. It needs a Prefect API (server or ephemeral) and a limit created with a slot decay, e.g.
  ``prefect gcl create opensubtitles-api --limit 1 --slot-decay-per-second 4``.
* :class:`RetryPolicy` — bounded attempts, exponential backoff with jitter, a cap on how long a
  ``Retry-After`` may ask us to wait.
* :class:`QuotaTracker` — the daily download quota (``remaining`` / ``reset_time_utc`` of
  OpenSubtitles download answers, 406/407 refusals), persisted to a small JSON file so that a later
  run knows the quota is spent and raises :class:`QuotaExhausted` *without sending a request*
  until the reset time. The file holds counters and times only — never a credential.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import random
import re
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any, Protocol

from extractors.providers.errors import ProviderError

log = logging.getLogger(__name__)

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


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

    Callers reserve a token under a lock (the balance may go negative: that is the queue) and
    sleep outside it, so concurrent callers are served in order without busy waiting.
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
    """A Prefect global concurrency limit (with slot decay) used as a cross-process rate limit.

    ``strict=True``: a missing limit is an error (a typo must not silently disable limiting).
    """

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


# --------------------------------------------------------------------------------------------
# Retries
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RetryPolicy:
    """Bounded retries with exponential backoff and jitter.

    ``max_attempts`` counts every request of one logical call (the first one included), whatever
    the reason of the retry (5xx, timeout, connection error, truncated body, 429, HTML instead of
    JSON). A 429 waits ``Retry-After`` (or ``RateLimit-Reset``) when given, else the backoff; a
    server asking for more than ``max_retry_after_s`` is not waited for: the call fails with
    ``rate_limited`` (retryable) at once.
    """

    max_attempts: int = 6
    backoff_base_s: float = 0.5
    backoff_max_s: float = 8.0
    max_retry_after_s: float = 120.0

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be >= 1")

    def backoff(self, retry_no: int, rng: random.Random) -> float:
        """Delay before retry ``retry_no`` (0-based): half fixed, half jitter ("equal jitter")."""
        ceiling = min(self.backoff_max_s, self.backoff_base_s * (2 ** min(retry_no, 30)))
        return ceiling / 2 + rng.uniform(0, ceiling / 2)


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
            return max(0.0, (when - (now or utc_now())).total_seconds())
    for name in ("ratelimit-reset", "x-ratelimit-reset"):
        value = lower.get(name)
        if value is not None and re.fullmatch(r"\s*\d+(\.\d+)?\s*", value):
            return float(value)
    return None


# --------------------------------------------------------------------------------------------
# Quota
# --------------------------------------------------------------------------------------------
class QuotaExhausted(ProviderError):
    """The download quota is spent until ``reset_time_utc``; nothing was (or will be) sent."""

    def __init__(self, detail: str, reset_time_utc: datetime | None):
        super().__init__("quota_exhausted", detail, retryable=True)
        self.reset_time_utc = reset_time_utc


def next_daily_reset(now: datetime) -> datetime:
    """OpenSubtitles renews quotas daily at 23:59:59.999 UTC."""
    now = now.astimezone(timezone.utc)
    reset = now.replace(hour=23, minute=59, second=59, microsecond=999000)
    return reset if reset > now else reset + timedelta(days=1)


def parse_reset(body: Mapping[str, Any], now: datetime) -> datetime | None:
    """The reset time of a download/406 body: ``reset_time_utc`` (ISO), else ``reset_time``
    ("09 hours and 57 minutes") relative to now."""
    raw = body.get("reset_time_utc")
    if isinstance(raw, str) and raw.strip():
        try:
            when = datetime.fromisoformat(raw.strip().replace("Z", "+00:00"))
            return when if when.tzinfo else when.replace(tzinfo=timezone.utc)
        except ValueError:
            pass
    rel = body.get("reset_time")
    if isinstance(rel, str):
        m = re.search(r"(\d+)\s*hours?\D+(\d+)\s*minutes?", rel)
        if m:
            return now + timedelta(hours=int(m.group(1)), minutes=int(m.group(2)))
    return None


class QuotaTracker:
    """Daily download quota of one account, persisted to ``path`` (JSON) when given.

    ``check()`` raises :class:`QuotaExhausted` while the quota is known to be spent and the reset
    time has not passed — callers call it before every download request, so an exhausted quota
    costs no request at all. A refusal whose reset time is missing gets the next daily reset; one
    whose reset time already passed (clock skew) is held for ``min_block_s`` so a skewed clock
    cannot make the client probe in a loop.
    """

    VERSION = 1

    def __init__(self, path: Path | str | None, *, provider: str, account: str,
                 clock: Clock = utc_now, min_block_s: float = 1.0):
        self.path = Path(path) if path else None
        self.provider = provider
        self.account = account
        self._clock = clock
        self.min_block_s = min_block_s
        self._lock = threading.Lock()
        self.remaining: int | None = None
        self.requests: int | None = None
        self.allowed: int | None = None
        self.exhausted = False
        self.reset_time_utc: datetime | None = None
        self.updated_at: datetime | None = None
        self._load()

    # -- persistence ---------------------------------------------------------------------------
    def _load(self) -> None:
        if not self.path or not self.path.exists():
            return
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            log.warning("quota state %s unreadable (%s); starting without it", self.path, type(exc).__name__)
            return
        if not isinstance(data, dict) or data.get("provider") != self.provider:
            return
        if data.get("account") != self.account:
            log.info("quota state %s belongs to another account/endpoint; ignored", self.path)
            return
        self.remaining = _int_or_none(data.get("remaining"))
        self.requests = _int_or_none(data.get("requests"))
        self.allowed = _int_or_none(data.get("allowed"))
        self.exhausted = bool(data.get("exhausted"))
        self.reset_time_utc = _dt_or_none(data.get("reset_time_utc"))
        self.updated_at = _dt_or_none(data.get("updated_at"))

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": self.VERSION,
            "provider": self.provider,
            "account": self.account,
            "remaining": self.remaining,
            "requests": self.requests,
            "allowed": self.allowed,
            "exhausted": self.exhausted,
            "reset_time_utc": self.reset_time_utc.isoformat() if self.reset_time_utc else None,
            "updated_at": self.updated_at.isoformat() if self.updated_at else None,
        }

    def _save(self) -> None:
        self.updated_at = self._clock()
        if not self.path:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".quota-", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(self.to_dict(), fh, indent=2, sort_keys=True)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    # -- decisions -----------------------------------------------------------------------------
    def check(self) -> None:
        """Raise :class:`QuotaExhausted` while the quota is spent; otherwise return."""
        with self._lock:
            if not self.exhausted:
                return
            now = self._clock()
            if self.reset_time_utc is not None and now < self.reset_time_utc:
                raise QuotaExhausted(
                    f"{self.provider} download quota spent ({self.requests if self.requests is not None else '?'} "
                    f"used); resets at {self.reset_time_utc.isoformat()}", self.reset_time_utc)
            log.info("%s download quota reset time %s passed; downloads resume", self.provider,
                     self.reset_time_utc.isoformat() if self.reset_time_utc else "?")
            self.exhausted = False
            self.remaining = None
            self._save()

    def record_success(self, body: Mapping[str, Any]) -> None:
        """A 200 download answer: ``requests``, ``remaining``, ``reset_time_utc``."""
        with self._lock:
            now = self._clock()
            self.requests = _int_or_none(body.get("requests"), self.requests)
            self.remaining = _int_or_none(body.get("remaining"), self.remaining)
            reset = parse_reset(body, now)
            if reset is not None:
                self.reset_time_utc = reset
            if self.remaining is not None and self.remaining <= 0:
                self.exhausted = True
                self._ensure_future_reset(now)
                log.warning("%s download quota now spent; next downloads wait until %s", self.provider,
                            self.reset_time_utc.isoformat() if self.reset_time_utc else "?")
            self._save()

    def record_refusal(self, status: int, body: Mapping[str, Any] | None) -> QuotaExhausted:
        """A 406/407 answer: the quota is spent (even when the body claims ``remaining`` > 0)."""
        body = body or {}
        with self._lock:
            now = self._clock()
            self.requests = _int_or_none(body.get("requests"), self.requests)
            remaining = _int_or_none(body.get("remaining"))
            self.remaining = 0 if remaining is None else remaining
            self.reset_time_utc = parse_reset(body, now)
            self.exhausted = True
            self._ensure_future_reset(now)
            self._save()
            return QuotaExhausted(
                f"{self.provider} refused the download with HTTP {status} (quota spent, "
                f"{self.requests if self.requests is not None else '?'} used); resets at "
                f"{self.reset_time_utc.isoformat()}", self.reset_time_utc)

    def record_info(self, data: Mapping[str, Any]) -> None:
        """``/infos/user`` data: remaining/allowed (no reset time there, so it never blocks)."""
        with self._lock:
            self.allowed = _int_or_none(data.get("allowed_downloads"), self.allowed)
            self.remaining = _int_or_none(data.get("remaining_downloads"), self.remaining)
            self.requests = _int_or_none(data.get("downloads_count"), self.requests)
            self._save()

    def _ensure_future_reset(self, now: datetime) -> None:
        if self.reset_time_utc is None:
            self.reset_time_utc = next_daily_reset(now)
        floor = now + timedelta(seconds=self.min_block_s)
        if self.reset_time_utc < floor:
            self.reset_time_utc = floor


def _int_or_none(value: Any, default: int | None = None) -> int | None:
    if isinstance(value, bool):
        return default
    if isinstance(value, int):
        return value
    if isinstance(value, str) and re.fullmatch(r"-?\d+", value.strip()):
        return int(value)
    return default


def _dt_or_none(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)
