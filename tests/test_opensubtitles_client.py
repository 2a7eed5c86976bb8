"""The OpenSubtitles provider (extractors/providers/opensubtitles.py) against the loopback
fixture server: search/paging/candidate metadata, raw download bytes, rate limit, retries and
recovery for every fault mode, bounded failures, quota exhaustion and its persisted state, and
secrets that never leak."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import sys
import textwrap
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from cinesub.records import Candidate
from cinesub.settings import ProviderSettings
from extractors.http_client import RetryPolicy, TokenBucket
from extractors.providers.errors import REASON_CODES, ProviderError
from extractors.providers.opensubtitles import OpenSubtitlesProvider
from extractors.providers.ratelimit import QuotaExhausted, QuotaTracker
from fixtures import FaultConfig, OpenSubtitlesFixture

REPO = Path(__file__).resolve().parent.parent
FAST_RETRY = RetryPolicy(max_attempts=6, backoff_base_s=0.01, backoff_max_s=0.05, max_retry_after_s=30)


@pytest.fixture
def server(world):
    with OpenSubtitlesFixture(world) as srv:
        yield srv


class SleepLog:
    """An injectable sleep that records what the client asked for and sleeps at most ``cap``."""

    def __init__(self, cap: float = 0.02):
        self.cap = cap
        self.calls: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)
        time.sleep(min(seconds, self.cap))


def client(srv: OpenSubtitlesFixture, tmp_path: Path | None = None, **kw) -> OpenSubtitlesProvider:
    params = dict(api_key=srv.api_key, username=srv.username, password=srv.password, base_url=srv.api_url,
                  requests_per_second=1000, burst=50, timeout_s=5.0, retry=FAST_RETRY, seed=1,
                  sleep=SleepLog())
    params.update(kw)
    state = params.pop("state_path", tmp_path / "quota.json" if tmp_path else None)
    return OpenSubtitlesProvider(state_path=state, **params)


def pairs(manifest: dict, films: int | None = None) -> list[tuple[str, str]]:
    out = sorted({(c["imdb_id"], c["language"]) for c in manifest["candidates"]})
    if films is not None:
        keep = sorted({tt for tt, _ in out})[:films]
        out = [p for p in out if p[0] in keep]
    return out


def expected(manifest: dict, tt: str, lang: str, include_mt: bool = False) -> list[str]:
    cands = [c for c in manifest["candidates"] if (c["imdb_id"], c["language"]) == (tt, lang)
             and (include_mt or not (c["machine_translated"] or c["ai_translated"]))]
    # the planted multi-file items: one candidate each, its parts' ids joined by "+"
    cands += [m for m in manifest.get("multi_part", []) if (m["imdb_id"], m["language"]) == (tt, lang)]
    return [c["file_id"] for c in sorted(cands, key=lambda c: -c["download_count"])]


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def workload(provider: OpenSubtitlesProvider, manifest: dict, films: int = 3) -> dict:
    """Search every pair of the first films and download every candidate: {file_id: sha256}."""
    got = {}
    for tt, lang in pairs(manifest, films):
        for cand in provider.search(tt, lang):
            try:
                got[cand.file_id] = sha(provider.download(cand))
            except ProviderError as exc:  # a planted multi-part item whose parts are not joined
                if exc.reason_code != "multi_part":
                    raise
                got[cand.file_id] = "multi_part"
    return got


# --------------------------------------------------------------------------------------------
# search and download
# --------------------------------------------------------------------------------------------
def test_search_matches_the_world_and_its_sidecars(server, manifest, world, tmp_path):
    p = client(server, tmp_path)
    for tt, lang in pairs(manifest):
        found = p.search(tt, lang)
        assert [c.file_id for c in found] == expected(manifest, tt, lang), (tt, lang)
        for c in found:
            folder = "opensubtitles_multipart" if "+" in c.file_id else "subtitles"  # a multi-file item
            side = json.loads((world / folder / tt / lang / f"{c.file_id.split('+')[0]}.json").read_text())
            assert c.provider == "opensubtitles" and c.imdb_id == tt and c.language == lang and c.url is None
            assert c.download_count == side["download_count"]
            assert c.uploader == side["uploader"]["name"] and c.release == side["release"]
            assert c.fps == side["fps"] and c.hearing_impaired == side["hearing_impaired"]
            assert c.upload_date == side["upload_date"]
            assert c.feature_imdb_id == f"tt{side['feature_details']['imdb_id']:07d}" == tt
            assert not c.machine_translated and not c.ai_translated
    assert p.search("tt0000001", "en") == []
    queries = [e.query for e in server.log if e.path == "/api/v1/subtitles"]
    eight = next(tt for tt, _ in pairs(manifest) if len(tt) == 10)
    assert any(f"imdb_id={int(eight[2:])}&" in q for q in queries)  # numeric, no "tt"
    assert all("imdb_id=tt" not in q and "imdb_id=0" not in q for q in queries)
    assert all("machine_translated=exclude" in q and "ai_translated=exclude" in q for q in queries)
    assert all(e.status == 200 for e in server.log)  # never page=1 (the real API 301s it)


def test_paging_reads_every_page(world, manifest, tmp_path):
    with OpenSubtitlesFixture(world, per_page=1) as srv:
        p = client(srv, tmp_path)
        for tt, lang in pairs(manifest, 4):
            assert [c.file_id for c in p.search(tt, lang)] == expected(manifest, tt, lang)
        searches = [e for e in srv.log if e.path == "/api/v1/subtitles"]
        n_expected = sum(max(1, len(expected(manifest, tt, lang))) for tt, lang in pairs(manifest, 4))
        assert len(searches) == n_expected
        assert sum("page=" in e.query for e in searches) == n_expected - len(pairs(manifest, 4))
        capped = client(srv, tmp_path, max_pages=1)
        tt, lang = next(pr for pr in pairs(manifest) if len(expected(manifest, *pr)) >= 2)
        assert len(capped.search(tt, lang)) == 1  # bounded by max_pages


def test_machine_translated_excluded_by_default(server, manifest, tmp_path):
    mt = next(c for c in manifest["candidates"] if c["machine_translated"])
    default = client(server, tmp_path).search(mt["imdb_id"], mt["language"])
    assert mt["file_id"] not in {c.file_id for c in default}
    included = client(server, tmp_path, include_machine_translated=True).search(mt["imdb_id"], mt["language"])
    assert [c.file_id for c in included] == expected(manifest, mt["imdb_id"], mt["language"], include_mt=True)
    assert next(c for c in included if c.file_id == mt["file_id"]).machine_translated


def test_download_returns_the_raw_bytes(server, manifest, tmp_path):
    p = client(server, tmp_path)
    odd = {"utf-16-le", "utf-16-be", "cp1256", "cp1258", "binary", "invalid-utf-8"}
    chosen = [c for c in manifest["candidates"] if c["encoding"] in odd or c["defect_layer"] == "provider_body"]
    assert {c["encoding"] for c in chosen} >= {"utf-16-le", "binary", "cp1256"}
    for c in chosen:
        cand = Candidate(imdb_id=c["imdb_id"], language=c["language"], provider="opensubtitles", file_id=c["file_id"])
        assert sha(p.download(cand)) == c["sha256"], c["path"]
    assert sum(server.downloads_granted.values()) == len(chosen)


def test_settings_object_and_mapping_are_accepted(server, manifest, tmp_path):
    from pydantic import SecretStr

    settings = ProviderSettings(opensubtitles_url=server.api_url, opensubtitles_api_key=SecretStr(server.api_key),
                                opensubtitles_username=server.username,
                                opensubtitles_password=SecretStr(server.password), requests_per_second=500)
    tt, lang = pairs(manifest)[0]
    a = OpenSubtitlesProvider(settings, tmp_path / "a.json", retry=FAST_RETRY)
    b = OpenSubtitlesProvider({"api_key": server.api_key, "base_url": server.api_url, "requests_per_second": 500,
                               "username": server.username, "password": server.password}, tmp_path / "b.json")
    assert a.search(tt, lang) == b.search(tt, lang) != []
    assert sha(a.download(a.search(tt, lang)[0])) == sha(b.download(b.search(tt, lang)[0]))


def test_invalid_queries_send_nothing(server, tmp_path):
    p = client(server, tmp_path)
    for args in [("0770828", "en"), ("tt123", "en"), ("tt0770828", "english"), ("tt0770828", "xx"), (None, "en")]:
        with pytest.raises(ProviderError) as e:
            p.search(*args)
        assert e.value.reason_code == "invalid_query"
    for cand in [Candidate(imdb_id="tt0770828", language="en", provider="local", file_id="1"),
                 Candidate(imdb_id="tt0770828", language="en", provider="opensubtitles", file_id="../1")]:
        with pytest.raises(ProviderError) as e:
            p.download(cand)
        assert e.value.reason_code == "invalid_query"
    assert server.log == []


def test_unknown_file_is_not_found(server, tmp_path):
    p = client(server, tmp_path)
    with pytest.raises(ProviderError) as e:
        p.download(Candidate(imdb_id="tt0770828", language="en", provider="opensubtitles", file_id="1"))
    assert e.value.reason_code == "not_found" and not e.value.retryable


def test_wrong_api_key_and_password(server, manifest, tmp_path):
    tt, lang = pairs(manifest)[0]
    with pytest.raises(ProviderError) as e:
        client(server, tmp_path, api_key="wrong-key").search(tt, lang)
    assert e.value.reason_code == "auth_failed"
    p = client(server, tmp_path, password="wrong-password")
    cand = p.search(tt, lang)[0]
    for _ in range(3):
        with pytest.raises(ProviderError) as e:
            p.download(cand)
        assert e.value.reason_code == "auth_failed"
    assert server.count("login") == 1  # a refused login is never retried (accounts get locked)
    anonymous = client(server, tmp_path, username=None, password=None)
    with pytest.raises(ProviderError) as e:
        anonymous.download(cand)  # the fixture, like the real API for most keys, wants a token
    assert e.value.reason_code == "auth_failed"


def test_expired_token_triggers_one_new_login(server, manifest, tmp_path):
    p = client(server, tmp_path)
    tt, lang = pairs(manifest)[0]
    cands = p.search(tt, lang)
    p.download(cands[0])
    server.tokens.clear()  # the server forgets the session
    assert sha(p.download(cands[1])) == next(c["sha256"] for c in manifest["candidates"] if c["file_id"] == cands[1].file_id)
    assert server.count("login") == 2


def test_account_info_updates_quota(server, tmp_path):
    p = client(server, tmp_path)
    info = p.account_info()
    assert info["allowed_downloads"] == server.allowed_downloads and info["remaining_downloads"] == server.allowed_downloads
    assert p.quota.remaining == server.allowed_downloads and not p.quota.exhausted


def test_base_url_from_login_followed_only_between_opensubtitles_hosts():
    p = OpenSubtitlesProvider(api_key="k", base_url="https://api.opensubtitles.com/api/v1")
    p._follow_base_url("evil.example.com")
    assert p._lib.base_url == "https://api.opensubtitles.com/api/v1"
    p._follow_base_url("vip-api.opensubtitles.com")
    assert p._lib.base_url == "https://vip-api.opensubtitles.com/api/v1"
    local = OpenSubtitlesProvider(api_key="k", base_url="http://127.0.0.1:9/api/v1")
    local._follow_base_url("api.opensubtitles.com")  # never leave the loopback fixture
    assert local._lib.base_url == "http://127.0.0.1:9/api/v1"


# --------------------------------------------------------------------------------------------
# rate limit
# --------------------------------------------------------------------------------------------
def test_token_bucket_spacing_with_a_fake_clock():
    now = [0.0]

    def sleep(s):
        now[0] += s

    bucket = TokenBucket(4.0, 1.0, clock=lambda: now[0], sleep=sleep)
    stamps = []
    for _ in range(9):
        bucket.acquire()
        stamps.append(now[0])
    assert stamps == pytest.approx([i * 0.25 for i in range(9)])
    # no one-second window ever holds more than 5 (the API's limit per IP)
    assert max(sum(1 for t in stamps if s <= t < s + 1.0) for s in stamps) <= 5
    now[0] += 10  # idle: at most `burst` tokens saved up
    bucket.acquire()
    t0 = now[0]
    bucket.acquire()
    assert now[0] - t0 == pytest.approx(0.25)


def test_token_bucket_is_shared_across_threads():
    bucket = TokenBucket(50.0, 1.0)
    stamps: list[float] = []
    lock = threading.Lock()

    def worker():
        for _ in range(5):
            bucket.acquire()
            with lock:
                stamps.append(time.monotonic())

    threads = [threading.Thread(target=worker) for _ in range(4)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=10)
    assert len(stamps) == 20 and time.monotonic() - t0 >= 19 / 50 * 0.95


def test_default_rate_stays_under_the_server_limit(world, manifest, tmp_path):
    with OpenSubtitlesFixture(world, enforce_rps=5) as srv:
        p = OpenSubtitlesProvider(api_key=srv.api_key, base_url=srv.api_url, state_path=tmp_path / "q.json",
                                  retry=FAST_RETRY)  # default: 4 requests/s, burst 1
        t0 = time.monotonic()
        for tt, lang in pairs(manifest)[:13]:
            p.search(tt, lang)
        elapsed = time.monotonic() - t0
        assert elapsed >= 12 / 4 * 0.95, elapsed
        assert srv.stats["status_429"] == 0 and srv.count("search") == 13


def test_unthrottled_client_gets_429_and_recovers(world, manifest, tmp_path):
    with OpenSubtitlesFixture(world, enforce_rps=5, config=FaultConfig(retry_after_s=1)) as srv:
        sleeps = SleepLog(cap=2.0)
        p = client(srv, tmp_path, sleep=sleeps)
        for tt, lang in pairs(manifest)[:8]:
            assert [c.file_id for c in p.search(tt, lang)] == expected(manifest, tt, lang)
        assert srv.stats["status_429"] > 0
        assert p.http.stats["retry_rate_limited"] == srv.stats["status_429"]
        assert all(s >= 1.0 for s in sleeps.calls)  # Retry-After honoured


# --------------------------------------------------------------------------------------------
# faults: recovered, or reported with the right reason code after bounded attempts
# --------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def baseline(world, manifest, tmp_path_factory):
    with OpenSubtitlesFixture(world) as srv:
        return workload(client(srv, tmp_path_factory.mktemp("base")), manifest)


@pytest.mark.parametrize("mode,reason", [("rate_429", "rate_limited"), ("server_5xx", "server_error"),
                                         ("slow", "timeout"), ("truncated", "truncated"),
                                         ("html_body", "provider_body")])
def test_fault_mode_is_recovered(world, manifest, baseline, tmp_path, mode, reason):
    cfg = FaultConfig(slow_delay_s=0.05, slow_long_s=2.0, retry_after_s=1)
    with OpenSubtitlesFixture(world, faults=mode, config=cfg) as srv:
        sleeps = SleepLog()
        p = client(srv, tmp_path, timeout_s=1.0, sleep=sleeps)
        assert workload(p, manifest) == baseline
        injected = srv.faults_injected()
        assert injected[mode] > 0, injected
        assert p.http.stats[f"retry_{reason}"] >= 1, p.http.stats
        assert all(n == 1 for n in srv.downloads_granted.values())  # every file asked for once
        if mode == "rate_429":
            assert any(s >= 1.0 for s in sleeps.calls)  # waited Retry-After, not the backoff


def test_all_faults_give_the_same_result_with_quota_resume(world, manifest, baseline, tmp_path):
    """Every mode at once (quota included): the client stops cleanly on the quota, resumes after
    the reset, and ends with exactly the fault-free bytes; no file is granted twice."""
    cfg = FaultConfig(slow_delay_s=0.02, slow_long_s=1.5, retry_after_s=0, quota_downloads=7, quota_reset_s=0.5)
    with OpenSubtitlesFixture(world, faults="all", config=cfg) as srv:
        p = client(srv, tmp_path, timeout_s=1.0)
        todo = [c for tt, lang in pairs(manifest, 3) for c in p.search(tt, lang)]
        got, stops = {}, 0
        for _ in range(200):  # bounded
            if not todo:
                break
            try:
                got[todo[0].file_id] = sha(p.download(todo[0]))
                todo.pop(0)
            except QuotaExhausted as exc:
                stops += 1
                wait = (exc.reset_time_utc - datetime.now(timezone.utc)).total_seconds()
                assert 0 < wait <= 1.6
                time.sleep(wait + 0.05)
        assert got == baseline
        assert stops >= len(baseline) // 7 - 1
        assert set(srv.downloads_granted.values()) == {1}
        assert srv.stats["status_406"] <= stops  # at most one refused request per stop, never a spin
        assert {k for k, v in srv.faults_injected().items() if v} >= {"rate_429", "server_5xx", "slow",
                                                                       "truncated", "html_body"}


@pytest.mark.parametrize("mode,config,reason", [
    ("server_5xx", FaultConfig(server_5xx_repeat=100), "server_error"),
    ("html_body", FaultConfig(html_repeat=100), "provider_body"),
    ("rate_429", FaultConfig(rate_429_period=1, rate_429_burst=1, rate_429_offset=0, retry_after_s=0), "rate_limited"),
])
def test_persistent_faults_fail_after_bounded_attempts(world, manifest, tmp_path, mode, config, reason):
    policy = RetryPolicy(max_attempts=4, backoff_base_s=0.01, backoff_max_s=1.0)
    with OpenSubtitlesFixture(world, faults=mode, config=config) as srv:
        tt, lang = pairs(manifest)[0]
        # a key the plan selects for this mode (rate_429 hits every request anyway)
        langs = [lang, "en", "ar", "id", "fa", "ro", "vi"]
        lang = next(lg for lg in langs if mode == "rate_429" or srv.plan.mode_for(
            f"search?ai_translated=exclude&imdb_id={int(tt[2:])}&languages={lg}&machine_translated=exclude",
            ("server_5xx", "slow", "truncated", "html_body")) == mode)
        sleeps = SleepLog()
        p = client(srv, tmp_path, retry=policy, sleep=sleeps)
        with pytest.raises(ProviderError) as e:
            p.search(tt, lang)
        assert e.value.reason_code == reason and e.value.retryable
        assert "gave up after 4 attempts" in e.value.detail
        assert srv.count("search") == 4 and len(sleeps.calls) == 3
        if mode == "server_5xx":
            assert sleeps.calls == sorted(sleeps.calls) and sleeps.calls[-1] > sleeps.calls[0]  # exponential


def test_persistent_truncation_is_reported(world, manifest, tmp_path):
    with OpenSubtitlesFixture(world, faults="truncated", config=FaultConfig(truncated_repeat=100)) as srv:
        p = client(srv, tmp_path, retry=RetryPolicy(max_attempts=3, backoff_base_s=0.01))
        failed = []
        for cand in _cands(manifest, 12):  # downloads only: POST /download is never truncated
            try:
                assert sha(p.download(cand)) == next(c["sha256"] for c in manifest["candidates"]
                                                     if c["file_id"] == cand.file_id)
            except ProviderError as exc:
                assert exc.reason_code == "truncated" and exc.retryable and "gave up after 3" in exc.detail
                assert srv.files_served[int(cand.file_id)] == 3  # three GETs of the link, then stop
                failed.append(cand.file_id)
        assert failed and len(failed) < 12
        assert srv.faults_injected()["truncated"] == 3 * len(failed)


def test_retry_after_longer_than_allowed_fails_fast(world, manifest, tmp_path):
    cfg = FaultConfig(rate_429_period=1, rate_429_burst=1, rate_429_offset=0, retry_after_s=3600)
    with OpenSubtitlesFixture(world, faults="rate_429", config=cfg) as srv:
        sleeps = SleepLog()
        p = client(srv, tmp_path, sleep=sleeps)
        with pytest.raises(ProviderError) as e:
            p.search(*pairs(manifest)[0])
        assert e.value.reason_code == "rate_limited" and e.value.retryable and "3600" in e.value.detail
        assert srv.count("search") == 1 and sleeps.calls == []  # failed at once: one request, no wait


def test_timeouts_and_refused_connections_are_bounded(tmp_path):
    # a socket that accepts connections (backlog) but never answers
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    port = silent.getsockname()[1]
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    dead = closed.getsockname()[1]
    closed.close()
    try:
        policy = RetryPolicy(max_attempts=3, backoff_base_s=0.01, backoff_max_s=0.02)
        for url, reason in ((f"http://127.0.0.1:{port}/api/v1", "timeout"), (f"http://127.0.0.1:{dead}/api/v1", "network")):
            p = OpenSubtitlesProvider(api_key="k", base_url=url, timeout_s=0.3, retry=policy, requests_per_second=100)
            assert p.http._client.timeout.read == 0.3  # the client's own timeout, not httpx's default
            with pytest.raises(ProviderError) as e:
                p.search("tt0770828", "en")
            assert e.value.reason_code == reason and e.value.retryable
            assert p.http.stats["attempts"] == 3
    finally:
        silent.close()


# --------------------------------------------------------------------------------------------
# quota
# --------------------------------------------------------------------------------------------
class Clock:
    def __init__(self):
        self.now = datetime.now(timezone.utc)

    def __call__(self) -> datetime:
        return self.now


def _cands(manifest: dict, n: int) -> list[Candidate]:
    return [Candidate(imdb_id=c["imdb_id"], language=c["language"], provider="opensubtitles", file_id=c["file_id"])
            for c in manifest["candidates"][:n]]


def test_quota_exhaustion_stops_without_requests_and_persists(world, manifest, tmp_path):
    clock = Clock()
    cfg = FaultConfig(quota_downloads=3, quota_reset_s=3600)
    state = tmp_path / "state" / "opensubtitles-quota.json"
    cands = _cands(manifest, 6)
    with OpenSubtitlesFixture(world, faults="quota", config=cfg) as srv:
        p = client(srv, state_path=state, clock=clock)
        for c in cands[:3]:
            p.download(c)
        saved = json.loads(state.read_text())
        assert saved["exhausted"] is True and saved["remaining"] == 0 and saved["requests"] == 3
        reset = datetime.fromisoformat(saved["reset_time_utc"])
        assert timedelta(minutes=59) < reset - clock.now <= timedelta(hours=1, seconds=5)
        before = len(srv.log)
        for _ in range(50):  # "never spin": every call answers at once, without a request or a wait
            with pytest.raises(QuotaExhausted) as e:
                p.download(cands[3])
        assert len(srv.log) == before
        err = e.value
        assert err.reason_code == "quota_exhausted" and err.retryable and isinstance(err, ProviderError)
        assert err.reset_time_utc == reset and reset.isoformat() in err.detail
        # a later run (new client, same state file) knows — still no request, not even a login
        later = client(srv, state_path=state, clock=clock)
        with pytest.raises(QuotaExhausted):
            later.download(cands[3])
        assert len(srv.log) == before
        # after the reset time the client resumes (the server renewed the quota too)
        clock.now = reset + timedelta(seconds=1)
        srv.reset_quota()
        assert sha(later.download(cands[3])) == manifest["candidates"][3]["sha256"]
        assert json.loads(state.read_text())["exhausted"] is False
        assert sum(srv.downloads_granted.values()) == 4


@pytest.mark.parametrize("status", [406, 407])
def test_quota_refusal_from_the_server(world, manifest, tmp_path, status):
    cfg = FaultConfig(quota_downloads=1, quota_reset_s=600, quota_status=status)
    cands = _cands(manifest, 3)
    with OpenSubtitlesFixture(world, faults="quota", config=cfg) as srv:
        client(srv, state_path=tmp_path / "other.json").download(cands[0])  # someone else spent it
        p = client(srv, state_path=tmp_path / "mine.json")
        n = srv.count("download")
        with pytest.raises(QuotaExhausted) as e:
            p.download(cands[1])
        assert srv.count("download") == n + 1 and srv.stats[f"status_{status}"] == 1
        assert f"HTTP {status}" in e.value.detail
        assert 590 <= (e.value.reset_time_utc - datetime.now(timezone.utc)).total_seconds() <= 601
        with pytest.raises(QuotaExhausted):
            p.download(cands[2])
        assert srv.count("download") == n + 1  # the second call sent nothing


def test_quota_state_ignores_another_account_and_skewed_reset(tmp_path):
    path = tmp_path / "q.json"
    clock = Clock()
    a = QuotaTracker(path, provider="opensubtitles", account="aaa", clock=clock)
    exc = a.record_refusal(406, {"requests": 5, "remaining": 0, "reset_time_utc": "2000-01-01T00:00:00Z"})
    assert exc.reset_time_utc >= clock.now + timedelta(seconds=1)  # a past reset is held a moment
    with pytest.raises(QuotaExhausted):
        QuotaTracker(path, provider="opensubtitles", account="aaa", clock=clock).check()
    QuotaTracker(path, provider="opensubtitles", account="bbb", clock=clock).check()  # another account
    b = QuotaTracker(None, provider="opensubtitles", account="x", clock=clock)
    b.record_refusal(406, {"reset_time": "02 hours and 30 minutes"})
    assert b.reset_time_utc == clock.now + timedelta(hours=2, minutes=30)
    c = QuotaTracker(None, provider="opensubtitles", account="x", clock=clock)
    c.record_refusal(407, None)  # no body: the next daily reset (23:59:59.999 UTC)
    assert (c.reset_time_utc.hour, c.reset_time_utc.minute, c.reset_time_utc.second) == (23, 59, 59)
    path.write_text("{not json")
    QuotaTracker(path, provider="opensubtitles", account="aaa", clock=clock).check()  # unreadable: ignored


# --------------------------------------------------------------------------------------------
# secrets
# --------------------------------------------------------------------------------------------
KEY = "Sk-LIVE/k3y+with&odd=chars%20"
PASSWORD = "p@ss word/with+plus&amp;"


def test_secrets_never_appear_in_logs_errors_or_state(world, manifest, tmp_path, caplog, capsys):
    import logging

    caplog.set_level(logging.DEBUG)
    state = tmp_path / "state" / "quota.json"
    seen: list[str] = []
    cfg = FaultConfig(quota_downloads=2, quota_reset_s=600, server_5xx_repeat=1, slow_long_s=1.5)
    with OpenSubtitlesFixture(world, faults="quota,server_5xx,html_body,truncated,slow,rate_429", config=cfg,
                              api_key=KEY, password=PASSWORD) as srv:
        p = client(srv, state_path=state, timeout_s=1.0)
        seen.append(repr(p))
        tt, lang = pairs(manifest)[0]
        cands = p.search(tt, lang)
        more = [c for pr in pairs(manifest)[1:3] for c in p.search(*pr)]
        for c in cands + more:
            try:
                p.download(c)
            except ProviderError as exc:
                seen += [str(exc), repr(exc), exc.detail]
        assert any("quota_exhausted" in s for s in seen)
        bad = client(srv, state_path=tmp_path / "bad.json", password=PASSWORD + "x")  # a wrong password that *contains* the right one
        bad.redact.add(PASSWORD + "x")
        for c in cands[:2]:
            try:
                bad.download(c)
            except ProviderError as exc:
                seen += [str(exc), repr(exc)]
        wrong_key = client(srv, state_path=tmp_path / "wrong.json", api_key=KEY[::-1])
        try:
            wrong_key.search(tt, lang)
        except ProviderError as exc:
            seen += [str(exc), repr(exc)]
        persistent = OpenSubtitlesFixture(world, faults="server_5xx", config=FaultConfig(server_5xx_repeat=99),
                                          api_key=KEY, password=PASSWORD)
        with persistent:
            q = client(persistent, state_path=tmp_path / "p.json", retry=RetryPolicy(max_attempts=2, backoff_base_s=0.01))
            for lg in ("en", "ar", "id", "fa", "ro", "vi"):
                try:
                    q.search(tt, lg)
                except ProviderError as exc:
                    seen += [str(exc), repr(exc)]
        tokens = set(srv.tokens) | set(persistent.tokens)
    assert tokens and len(seen) > 5
    out = capsys.readouterr()
    texts = {"logs": caplog.text + "\n".join(r.getMessage() for r in caplog.records), "stdout": out.out,
             "stderr": out.err, "errors": "\n".join(seen), "state": state.read_text()}
    assert "logged in" in texts["logs"] and "\"exhausted\": true" in texts["state"]
    from urllib.parse import quote, quote_plus

    for secret in [KEY, PASSWORD, *tokens]:
        for form in {secret, quote(secret, safe=""), quote_plus(secret), json.dumps(secret)[1:-1]}:
            for where, text in texts.items():
                assert form not in text, f"secret leaked into {where}"


# --------------------------------------------------------------------------------------------
# Prefect global concurrency limit as a shared rate limit (ephemeral Prefect API, subprocess)
# --------------------------------------------------------------------------------------------
PREFECT_SCRIPT = textwrap.dedent("""
    import json, sys, time
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import GlobalConcurrencyLimitCreate
    from extractors.providers.errors import ProviderError
    from extractors.providers.opensubtitles import OpenSubtitlesProvider
    from fixtures import OpenSubtitlesFixture

    world = sys.argv[1]
    with get_client(sync_client=True) as c:
        c.create_global_concurrency_limit(GlobalConcurrencyLimitCreate(name="os-api", limit=1, slot_decay_per_second=2.0))
    out = {}
    with OpenSubtitlesFixture(world) as srv:
        p = OpenSubtitlesProvider(api_key=srv.api_key, base_url=srv.api_url, requests_per_second=1000,
                                  prefect_rate_limit="os-api")
        p.search("tt0770828", "en")  # warm up
        t0 = time.monotonic()
        for _ in range(5):
            p.search("tt0770828", "en")
        out["elapsed"] = time.monotonic() - t0
        free = OpenSubtitlesProvider(api_key=srv.api_key, base_url=srv.api_url, requests_per_second=1000)
        t0 = time.monotonic()
        for _ in range(5):
            free.search("tt0770828", "en")
        out["unlimited"] = time.monotonic() - t0
        typo = OpenSubtitlesProvider(api_key=srv.api_key, base_url=srv.api_url, prefect_rate_limit="no-such-limit")
        try:
            typo.search("tt0770828", "en")
        except ProviderError as exc:
            out["missing"] = [exc.reason_code, exc.retryable]
    print("RESULT " + json.dumps(out))
""")


@pytest.mark.slow
def test_prefect_global_concurrency_rate_limit(world, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "CINESUB_"))}
    env.update(PREFECT_HOME=str(tmp_path / "prefect-home"), PREFECT_SERVER_ANALYTICS_ENABLED="false",
               PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS="90", PYTHONPATH=str(REPO))
    script = tmp_path / "gcl.py"
    script.write_text(PREFECT_SCRIPT)
    res = subprocess.run([sys.executable, str(script), str(world)], cwd=REPO, env=env, capture_output=True,
                         text=True, timeout=240, stdin=subprocess.DEVNULL)
    line = next((ln for ln in res.stdout.splitlines() if ln.startswith("RESULT ")), None)
    assert line, f"exit {res.returncode}\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}"
    out = json.loads(line[len("RESULT "):])
    assert out["elapsed"] >= 5 * 0.5 * 0.7, out  # 2 slots/s decay: ~0.5 s apart (a lower bound: load cannot break it)
    assert out["missing"] == ["rate_limited", False]


def test_reason_codes_documented():
    for code in ("auth_failed", "rate_limited", "quota_exhausted", "server_error", "timeout", "network",
                 "truncated", "provider_body", "bad_response", "not_found", "invalid_query"):
        assert code in REASON_CODES
