"""SubDL as it may really answer (issue 16 point 6), against the loopback SubDL emulation and the
real client: the daily limit remembered in a state file (no request after the first limit answer,
in this client or the next, until the reset), a 403 with a text body is an auth failure that
stops SubDL, an .ass-only archive (``ass_only``), and CD1/CD2 archives joined where the offsets are
certain, else ``multi_part``."""

from __future__ import annotations

import json
import time
from datetime import datetime, timedelta, timezone

import pytest

from extractors.http_client import RetryPolicy
from extractors.providers.errors import ProviderError
from extractors.providers.ratelimit import QuotaExhausted
from extractors.providers.subdl import SubDLProvider
from extractors.srt import parse
from fixtures import SubDLFixture

FAST_RETRY = RetryPolicy(max_attempts=6, backoff_base_s=0.01, backoff_max_s=0.05)


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2025, 2, 13, 12, 0, tzinfo=timezone.utc)

    def __call__(self) -> datetime:
        return self.now


def client(srv: SubDLFixture, **kw) -> SubDLProvider:
    params = dict(api_key=srv.api_key, base_url=srv.api_url, download_url=srv.download_url,
                  requests_per_second=1000, burst=50, timeout_s=5.0, retry=FAST_RETRY, seed=1,
                  sleep=lambda s: time.sleep(min(s, 0.02)))
    params.update(kw)
    return SubDLProvider(**params)


def slot(manifest: dict) -> tuple[str, str]:
    """A film and language with 3+ archives whose best one (the source of the extra archives) is
    a clean track."""
    clean = {(c["imdb_id"], c["language"]) for c in manifest["candidates"]
             if c["rank"] == 1 and c["defect_layer"] is None and c["boundary_case"] is None}
    c = next(c for c in manifest["candidates"] if c["rank"] == 3 and (c["imdb_id"], c["language"]) in clean)
    return c["imdb_id"], c["language"]


def test_daily_limit_is_remembered_across_clients_until_the_reset(world, manifest, tmp_path):
    state = tmp_path / "state" / "subdl-quota.json"
    clock = Clock()
    tt, lang = slot(manifest)
    with SubDLFixture(world, daily_limit=1) as srv:
        a = client(srv, state_path=state, clock=clock)
        found = a.search(tt, lang)
        assert len(found) >= 3
        a.download(found[0])
        with pytest.raises(QuotaExhausted) as ei:
            a.download(found[1])
        assert ei.value.reason_code == "quota_exhausted"
        assert srv.limit_answers == 1  # a 429 naming the daily limit is not retried
        sent = len(srv.log)
        with pytest.raises(QuotaExhausted):
            a.download(found[2])
        b = client(srv, state_path=state, clock=clock)  # the next run: the state file remembers it
        with pytest.raises(QuotaExhausted):
            b.search(tt, lang)
        with pytest.raises(QuotaExhausted):
            b.download(found[2])
        assert len(srv.log) == sent and srv.limit_answers == 1  # not one more request
        saved = json.loads(state.read_text())
        assert saved["provider"] == "subdl" and saved["exhausted"] is True
        assert srv.api_key not in state.read_text()
        reset = datetime.fromisoformat(saved["reset_time_utc"])
        assert reset > clock.now and reset - clock.now <= timedelta(days=1)
        clock.now = reset + timedelta(seconds=1)  # after the reset: asked again
        srv.daily_limit = None
        c = client(srv, state_path=state, clock=clock)
        assert c.download(found[2])
        assert len(srv.log) == sent + 1


def test_a_403_with_a_text_body_is_an_auth_failure_that_stops_subdl(world, manifest, caplog):
    tt, lang = slot(manifest)
    with SubDLFixture(world, auth_text_403=True) as srv:
        p = client(srv)
        with caplog.at_level("ERROR", logger="extractors.providers.subdl"):
            with pytest.raises(ProviderError) as ei:
                p.search(tt, lang)
            assert ei.value.reason_code == "auth_failed" and not ei.value.retryable
            assert "text body" in ei.value.detail and "Forbidden" in ei.value.detail
            sent = len(srv.log)
            assert sent == 1  # not retried
            for _ in range(3):
                with pytest.raises(ProviderError) as again:
                    p.search(tt, lang)
                assert again.value.reason_code == "auth_failed"
        assert len(srv.log) == sent  # SubDL is off: no further request
        assert len([r for r in caplog.records if "SubDL is off" in r.getMessage()]) == 1  # one clear message
        assert srv.api_key not in caplog.text


def test_ass_only_and_multi_part_archives(world, manifest):
    tt, lang = slot(manifest)
    kinds = ("ass_only", "multi_part", "multi_part_restart")
    with SubDLFixture(world, extra_archives=kinds) as srv:
        p = client(srv)
        found = {c.release: c for c in p.search(tt, lang)}
        extra = {k: found[f"cinesub.fixture.{k}"] for k in kinds}
        with pytest.raises(ProviderError) as ei:
            p.download(extra["ass_only"])
        assert ei.value.reason_code == "ass_only" and not ei.value.retryable
        data = p.download(extra["multi_part"])
        entries = parse(data.decode("utf-8")).entries
        prov = p.joins[extra["multi_part"].file_id]
        assert [q["part"] for q in prov["parts"]] == [1, 2] and prov["parts"][0]["file_name"].endswith("CD1.srt")
        assert len(entries) == prov["entries"] == sum(q["entries"] for q in prov["parts"])
        assert len({e.index for e in entries}) == len(entries)
        with pytest.raises(ProviderError) as ei:
            p.download(extra["multi_part_restart"])
        assert ei.value.reason_code == "multi_part" and "restart" in ei.value.detail
        assert extra["multi_part_restart"].file_id not in p.joins
