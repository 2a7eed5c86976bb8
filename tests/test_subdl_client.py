"""The SubDL provider (extractors/providers/subdl.py) against the loopback SubDL fixture: search,
paging, ZIP download with in-memory extraction, fault recovery, zip-bomb/zip-slip refusals with
nothing written, and an API key that never leaks (SubDL puts it in query strings)."""

from __future__ import annotations

import hashlib
import json
import logging
import time
from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest

from cinesub.records import Candidate
from extractors.http_client import RetryPolicy
from extractors.providers.errors import ProviderError
from extractors.providers.subdl import SubDLProvider
from fixtures import FaultConfig, SubDLFixture

FAST_RETRY = RetryPolicy(max_attempts=6, backoff_base_s=0.01, backoff_max_s=0.05)


@pytest.fixture
def server(world):
    with SubDLFixture(world) as srv:
        yield srv


def client(srv: SubDLFixture, **kw) -> SubDLProvider:
    params = dict(api_key=srv.api_key, base_url=srv.api_url, download_url=srv.download_url,
                  requests_per_second=1000, burst=50, timeout_s=5.0, retry=FAST_RETRY, seed=1,
                  sleep=lambda s: time.sleep(min(s, 0.02)))
    params.update(kw)
    return SubDLProvider(**params)


def pairs(manifest: dict, films: int | None = None) -> list[tuple[str, str]]:
    out = sorted({(c["imdb_id"], c["language"]) for c in manifest["candidates"]})
    if films is not None:
        keep = sorted({tt for tt, _ in out})[:films]
        out = [p for p in out if p[0] in keep]
    return out


def world_files(manifest: dict, tt: str, lang: str) -> dict[str, dict]:
    """file id → manifest candidate (SubDL serves machine-translated files too: no such flag)."""
    return {c["file_id"]: c for c in manifest["candidates"] if (c["imdb_id"], c["language"]) == (tt, lang)}


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_search_maps_every_archive(server, manifest, world):
    p = client(server)
    for tt, lang in pairs(manifest, 6):
        found = p.search(tt, lang)
        files = world_files(manifest, tt, lang)
        assert sorted(c.file_id.split("-")[1] for c in found) == sorted(files)
        by_count = [c.file_id.split("-")[1] for c in found]
        assert by_count == sorted(files, key=lambda f: -files[f]["download_count"])  # SubDL's order kept
        for c in found:
            side = json.loads((world / "subtitles" / tt / lang / f"{c.file_id.split('-')[1]}.json").read_text())
            assert c.provider == "subdl" and c.imdb_id == tt and c.language == lang and c.feature_imdb_id == tt
            assert c.release == side["release"] and c.uploader == side["uploader"]["name"]
            assert c.hearing_impaired == side["hearing_impaired"] and c.download_count == 0
            assert c.url == f"{server.download_url}/subtitle/{c.file_id}.zip"  # the spliced api_key is gone
    assert p.search("tt0000001", "en") == []  # "can't find movie or tv"
    queries = [e.query for e in server.log if e.path == "/api/v1/subtitles"]
    assert all("imdb_id=tt" in q and "type=movie" in q and "api_key=***" in q for q in queries)
    assert any("languages=FA" in q for q in queries)


def test_paging(world, manifest):
    with SubDLFixture(world) as srv:
        p = client(srv, subs_per_page=1)
        tt, lang = next(pr for pr in pairs(manifest) if len(world_files(manifest, *pr)) >= 3)
        assert len(p.search(tt, lang)) == len(world_files(manifest, tt, lang))
        assert srv.count("search") == len(world_files(manifest, tt, lang))
        capped = client(srv, subs_per_page=1, max_pages=2)
        assert len(capped.search(tt, lang)) == 2


def test_download_extracts_the_srt_bytes(server, manifest):
    p = client(server)
    for tt, lang in pairs(manifest, 3):
        for c in p.search(tt, lang):
            want = world_files(manifest, tt, lang)[c.file_id.split("-")[1]]
            assert sha(p.download(c)) == want["sha256"]
            assert p.download_archive(c)[:4] == b"PK\x03\x04"


def test_auth_and_invalid_queries(server, manifest):
    tt, lang = pairs(manifest)[0]
    with pytest.raises(ProviderError) as e:
        client(server, api_key="wrong").search(tt, lang)
    assert e.value.reason_code == "auth_failed"
    n = len(server.log)
    with pytest.raises(ProviderError) as e:
        client(server, api_key=None).search(tt, lang)
    assert e.value.reason_code == "auth_failed" and len(server.log) == n
    p = client(server)
    for args in [("770828", "en"), ("tt0770828", "EN!"), ("tt0770828", None)]:
        with pytest.raises(ProviderError) as e:
            p.search(*args)
        assert e.value.reason_code == "invalid_query"
    for cand in [Candidate(imdb_id=tt, language=lang, provider="opensubtitles", file_id="1-2"),
                 Candidate(imdb_id=tt, language=lang, provider="subdl", file_id="../../etc/passwd"),
                 Candidate(imdb_id=tt, language=lang, provider="subdl", file_id="1-2?x=1")]:
        with pytest.raises(ProviderError) as e:
            p.download(cand)
        assert e.value.reason_code == "invalid_query"
    with pytest.raises(ProviderError) as e:
        p.download(Candidate(imdb_id=tt, language=lang, provider="subdl", file_id="1-2"))
    assert e.value.reason_code == "not_found"
    assert len(server.log) == n + 1


@pytest.mark.parametrize("mode,reason", [("rate_429", "rate_limited"), ("server_5xx", "server_error"),
                                         ("slow", "timeout"), ("truncated", "truncated"),
                                         ("html_body", "provider_body")])
def test_fault_mode_is_recovered(world, manifest, mode, reason):
    cfg = FaultConfig(slow_delay_s=0.05, slow_long_s=2.0, retry_after_s=0)
    with SubDLFixture(world) as clean:
        p0 = client(clean)
        baseline = {c.file_id: sha(p0.download(c)) for tt, lang in pairs(manifest, 3) for c in p0.search(tt, lang)}
    with SubDLFixture(world, faults=mode, config=cfg) as srv:
        p = client(srv, timeout_s=1.0)
        got = {c.file_id: sha(p.download(c)) for tt, lang in pairs(manifest, 3) for c in p.search(tt, lang)}
        assert got == baseline
        assert srv.faults_injected()[mode] > 0 and p.http.stats[f"retry_{reason}"] >= 1, (srv.faults_injected(), p.http.stats)


def test_zip_bomb_and_zip_slip_refused_and_nothing_written(world, manifest, tmp_path, monkeypatch):
    workdir = tmp_path / "a" / "b" / "c"
    workdir.mkdir(parents=True)
    monkeypatch.chdir(workdir)
    before = sorted(tmp_path.rglob("*"))
    with SubDLFixture(world, faults="zip_bomb,zip_slip") as srv:
        p = client(srv)
        tt, lang = pairs(manifest)[0]
        found = p.search(tt, lang)
        assert [c.release for c in found[:2]] == ["cinesub.fixture.zip_bomb", "cinesub.fixture.zip_slip"]
        codes = []
        for c in found:
            try:
                data = p.download(c)
            except ProviderError as exc:
                codes.append(exc.reason_code)
                assert not exc.retryable and c.file_id in exc.detail
            else:
                assert sha(data) == world_files(manifest, tt, lang)[c.file_id.split("-")[1]]["sha256"]
        assert codes == ["zip_bomb", "zip_slip"]
        assert srv.zips_served[found[0].file_id] == 1 and srv.zips_served[found[1].file_id] == 1  # not retried
    assert sorted(tmp_path.rglob("*")) == before
    for escaped in (tmp_path / "cinesub-zip-slip-evil.srt", tmp_path / "a" / "cinesub-zip-slip-evil.srt",
                    Path("/tmp/cinesub-zip-slip-abs.srt")):
        assert not escaped.exists()


def test_api_key_never_leaks(world, manifest, caplog, capsys):
    caplog.set_level(logging.DEBUG)
    key = "subdl/KEY+with&chars=%41"
    seen: list[str] = []
    cfg = FaultConfig(server_5xx_repeat=1, retry_after_s=0)
    with SubDLFixture(world, faults="server_5xx,rate_429,truncated,html_body,zip_bomb,zip_slip", config=cfg,
                      api_key=key) as srv:
        p = client(srv, api_key=key)
        seen.append(repr(p))
        for tt, lang in pairs(manifest, 2):
            for c in p.search(tt, lang):
                seen.append(c.model_dump_json())
                try:
                    p.download(c)
                except ProviderError as exc:
                    seen += [str(exc), repr(exc)]
        with SubDLFixture(world, faults="server_5xx", config=FaultConfig(server_5xx_repeat=99), api_key=key) as bad:
            q = client(bad, api_key=key, retry=RetryPolicy(max_attempts=2, backoff_base_s=0.01))
            for lang in ("en", "ar", "id", "fa", "ro", "vi"):
                try:
                    q.search(pairs(manifest)[0][0], lang)
                except ProviderError as exc:
                    seen += [str(exc), repr(exc)]
    assert any("zip_slip" in s for s in seen) and any("server_error" in s for s in seen)
    out = capsys.readouterr()
    logs = caplog.text + "\n".join(r.getMessage() for r in caplog.records)
    assert "api_key=***" in logs  # httpx's own request log went through the redacting filter
    for form in {key, quote(key, safe=""), quote_plus(key), json.dumps(key)[1:-1]}:
        for where, text in {"logs": logs, "stdout": out.out, "stderr": out.err, "seen": "\n".join(seen)}.items():
            assert form not in text, f"key leaked into {where}"
