"""Download-quota bookkeeping of the network providers.

Rate limits, the retry policy and ``Retry-After`` parsing live in the HTTP client layer,
:mod:`extractors.http_client`.

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
import re
import tempfile
import threading
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from extractors.providers.errors import ProviderError

log = logging.getLogger(__name__)

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


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
