"""The loopback fixture servers (fixtures/): response shapes against the real OpenSubtitles
bodies in ../shared/realdata, auth, paging redirect, quota, every fault mode, determinism, and a
clean start/stop. Plain HTTP clients here (httpx, raw sockets) — the provider clients are tested
in test_opensubtitles_client.py / test_subdl_client.py."""

from __future__ import annotations

import io
import json
import re
import socket
import threading
import time
import zipfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

import httpx
import pytest

from fixtures import FAULT_MODES, FaultConfig, OpenSubtitlesFixture, SubDLFixture, parse_faults
from fixtures.faults import CLOUDFLARE_HTML

OS_REAL = "opensubtitles_api/subliminal"


def _client() -> httpx.Client:
    return httpx.Client(timeout=5.0, trust_env=False)


def _login(c: httpx.Client, srv: OpenSubtitlesFixture) -> str:
    r = c.post(f"{srv.api_url}/login", json={"username": srv.username, "password": srv.password},
               headers={"Api-Key": srv.api_key})
    assert r.status_code == 200, r.text
    return r.json()["token"]


def _auth(srv: OpenSubtitlesFixture, token: str | None = None) -> dict[str, str]:
    h = {"Api-Key": srv.api_key}
    if token:
        h["Authorization"] = f"Bearer {token}"
    return h


def _real(realdata_dir: Path, name: str):
    return json.loads((realdata_dir / OS_REAL / name).read_text(encoding="utf-8"))


def _type_name(v) -> str:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    return type(v).__name__


# --------------------------------------------------------------------------------------------
# fault names
# --------------------------------------------------------------------------------------------
def test_parse_faults():
    assert parse_faults(None) == frozenset() == parse_faults("") == parse_faults([])
    assert parse_faults("all") == frozenset(FAULT_MODES)
    assert parse_faults("slow, quota") == {"slow", "quota"}
    assert parse_faults(["zip_bomb", "all"]) == frozenset(FAULT_MODES)
    assert set(FAULT_MODES) == {"rate_429", "quota", "server_5xx", "slow", "truncated", "html_body",
                                "zip_bomb", "zip_slip"}
    with pytest.raises(ValueError, match="unknown fault mode"):
        parse_faults("slow,teapot")


# --------------------------------------------------------------------------------------------
# OpenSubtitles shapes (real bodies)
# --------------------------------------------------------------------------------------------
@pytest.mark.realdata
def test_search_shape_matches_real_body(world, manifest, realdata_dir):
    real = _real(realdata_dir, "subliminal_test_query_imdb_id__01__api_v1_subtitles__200.json")
    film = next(c for c in manifest["candidates"] if c["rank"] == 1)
    with OpenSubtitlesFixture(world) as srv, _client() as c:
        r = c.get(f"{srv.api_url}/subtitles", params={"imdb_id": int(film["imdb_id"][2:]), "languages": film["language"]},
                  headers=_auth(srv))
        assert r.status_code == 200
        assert r.headers["content-type"] == "application/json; charset=utf-8"
        for h in ("RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset", "X-RateLimit-Limit-Second",
                  "X-RateLimit-Remaining-Second"):
            assert h in r.headers
        ours = r.json()
    assert set(ours) == set(real) == {"total_pages", "total_count", "per_page", "page", "data"}
    for key in ("total_pages", "total_count", "per_page", "page"):
        assert type(ours[key]) is type(real[key]) is int
    assert ours["data"], "the film has candidates"
    real_items, our_items = real["data"], ours["data"]
    assert {k for i in our_items for k in i} == {k for i in real_items for k in i} == {"id", "type", "attributes"}
    assert all(i["type"] == "subtitle" and isinstance(i["id"], str) for i in our_items)
    # every attribute key present in every real movie item is present in ours, with the same JSON type
    real_keys = set.intersection(*(set(i["attributes"]) for i in real_items))
    for item in our_items:
        a = item["attributes"]
        assert real_keys <= set(a), real_keys - set(a)
        for k in real_keys:
            rv = next((i["attributes"][k] for i in real_items if i["attributes"][k] is not None), None)
            if rv is not None and a[k] is not None:
                assert _type_name(a[k]) == _type_name(rv), (k, a[k], rv)
        for sub in ("feature_details", "uploader"):
            assert set(real_items[0]["attributes"][sub]) <= set(a[sub])
        assert isinstance(a["feature_details"]["imdb_id"], int) and a["feature_details"]["imdb_id"] == int(film["imdb_id"][2:])
        assert set(a["files"][0]) == set(real_items[0]["attributes"]["files"][0]) == {"file_id", "cd_number", "file_name"}
        assert isinstance(a["files"][0]["file_id"], int)


@pytest.mark.realdata
def test_login_info_download_shapes_match_real_bodies(world, manifest, realdata_dir):
    real_login = _real(realdata_dir, "subliminal_test_login__00__api_v1_login__200.json")
    real_info = _real(realdata_dir, "subliminal_test_user_infos__01__api_v1_infos_user__200.json")
    real_dl = _real(realdata_dir, "subliminal_test_download_subtitle__09__api_v1_download__200.json")
    real_401 = _real(realdata_dir, "subliminal_test_login_bad_password__00__api_v1_login__401.json")
    cand = manifest["candidates"][0]
    with OpenSubtitlesFixture(world) as srv, _client() as c:
        r = c.post(f"{srv.api_url}/login", json={"username": srv.username, "password": srv.password}, headers=_auth(srv))
        login = r.json()
        assert set(login) == set(real_login) and set(login["user"]) == set(real_login["user"])
        assert login["status"] == 200 and isinstance(login["token"], str) and login["token"]
        token = login["token"]
        info = c.get(f"{srv.api_url}/infos/user", headers=_auth(srv, token)).json()
        assert set(info) == {"data"} and set(info["data"]) == set(real_info["data"])
        r = c.post(f"{srv.api_url}/download", json={"file_id": int(cand["file_id"])}, headers=_auth(srv, token))
        assert r.status_code == 200
        dl = r.json()
        assert set(dl) == set(real_dl)
        for k in real_dl:
            assert _type_name(dl[k]) == _type_name(real_dl[k]), k
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", dl["reset_time_utc"])
        assert "/subfile/" in dl["link"] and dl["link"].startswith(srv.root_url)
        f = c.get(dl["link"])
        assert f.status_code == 200 and f.headers["content-type"] == "text/plain; charset=utf-8"
        assert f.content == (world / cand["path"]).read_bytes()
        bad = c.post(f"{srv.api_url}/login", json={"username": srv.username, "password": "wrong"}, headers=_auth(srv))
        assert bad.status_code == 401 and set(bad.json()) == set(real_401)
        assert bad.json()["message"].startswith("Error, invalid username/password failed:1 remaining:9")


@pytest.mark.realdata
def test_quota_406_shape_and_recovery(world, manifest, realdata_dir):
    issue = json.loads((realdata_dir / "opensubtitles_api" / "issue_reported_responses.json").read_text())
    excerpt = next(i for i in issue["items"] if i["id"] == "download_406_quota_anonymous_5")["body_excerpt"]
    real_keys = set(re.findall(r'"(\w+)":', excerpt))
    assert {"requests", "remaining", "message", "reset_time"} <= real_keys
    now = [datetime(2025, 2, 13, 12, 0, tzinfo=timezone.utc)]
    cfg = FaultConfig(quota_downloads=2, quota_reset_s=60)
    ids = [int(c["file_id"]) for c in manifest["candidates"][:3]]
    with OpenSubtitlesFixture(world, faults="quota", config=cfg, clock=lambda: now[0]) as srv, _client() as c:
        token = _login(c, srv)
        h = _auth(srv, token)
        a = c.post(f"{srv.api_url}/download", json={"file_id": ids[0]}, headers=h).json()
        b = c.post(f"{srv.api_url}/download", json={"file_id": ids[1]}, headers=h).json()
        assert (a["remaining"], b["remaining"]) == (1, 0)
        assert b["reset_time_utc"] == "2025-02-13T12:01:00.000Z"  # spent: renewed quota_reset_s later
        r = c.post(f"{srv.api_url}/download", json={"file_id": ids[2]}, headers=h)
        assert r.status_code == 406
        body = r.json()
        assert real_keys - {"uk", "uid", "ts"} <= set(body) | {"reset_time_utc"} and "reset_time_utc" in body
        assert body["remaining"] == 0 and body["requests"] == 2 and "link" not in body
        assert body["message"].startswith("You have downloaded your allowed 2 subtitles for 24h.Your quota will be renewed in")
        now[0] += timedelta(seconds=61)
        assert c.post(f"{srv.api_url}/download", json={"file_id": ids[2]}, headers=h).status_code == 200
        assert c.post(f"{srv.api_url}/download", json={"file_id": ids[0]}, headers=h).status_code == 200
        assert c.post(f"{srv.api_url}/download", json={"file_id": ids[1]}, headers=h).status_code == 406
        srv.reset_quota()
        assert c.post(f"{srv.api_url}/download", json={"file_id": ids[1]}, headers=h).status_code == 200
    with OpenSubtitlesFixture(world, faults="quota", config=FaultConfig(quota_downloads=0, quota_status=407)) as srv, \
            _client() as c:
        token = _login(c, srv)
        assert c.post(f"{srv.api_url}/download", json={"file_id": ids[0]}, headers=_auth(srv, token)).status_code == 407


def test_auth_rules(world, manifest):
    cand = manifest["candidates"][0]
    with OpenSubtitlesFixture(world) as srv, _client() as c:
        assert c.get(f"{srv.api_url}/subtitles", params={"imdb_id": 1}).status_code == 403
        r = c.get(f"{srv.api_url}/subtitles", params={"imdb_id": 1}, headers={"Api-Key": "wrong"})
        assert r.status_code == 403 and r.json()["message"] == "You cannot consume this service"
        body = {"file_id": int(cand["file_id"])}
        assert c.post(f"{srv.api_url}/download", json=body, headers=_auth(srv)).status_code == 401
        assert c.post(f"{srv.api_url}/download", json=body, headers=_auth(srv, "forged")).status_code == 401
        raw = {"Api-Key": srv.api_key, "Authorization": _login(c, srv)}  # no "Bearer "
        assert c.post(f"{srv.api_url}/download", json=body, headers=raw).status_code == 401
        assert c.get(f"{srv.api_url}/infos/user", headers=_auth(srv)).status_code == 401
        r = c.get(f"{srv.api_url}/subtitles", params={"imdb_id": cand["imdb_id"]}, headers=_auth(srv))
        assert r.status_code == 400  # the API wants the numeric id
        assert c.get(f"{srv.root_url}/download/NOPE/subfile/x.srt").status_code == 404


def test_page_one_redirects_and_paging(world, manifest):
    cand = next(c for c in manifest["candidates"] if c["rank"] == 3)
    params = {"imdb_id": int(cand["imdb_id"][2:]), "languages": cand["language"]}
    with OpenSubtitlesFixture(world, per_page=1) as srv, _client() as c:
        r = c.get(f"{srv.api_url}/subtitles", params={**params, "page": 1}, headers=_auth(srv))
        assert r.status_code == 301 and "page=" not in r.headers["location"]
        first = c.get(f"{srv.api_url}/subtitles", params=params, headers=_auth(srv)).json()
        n = sum(1 for x in manifest["candidates"] if (x["imdb_id"], x["language"]) == (cand["imdb_id"], cand["language"])
                and not x["machine_translated"])
        assert first["total_pages"] == first["total_count"] == n >= 3 and first["per_page"] == 1
        seen = [first["data"][0]["attributes"]["files"][0]["file_id"]]
        for page in range(2, n + 1):
            d = c.get(f"{srv.api_url}/subtitles", params={**params, "page": page}, headers=_auth(srv)).json()
            assert d["page"] == page and len(d["data"]) == 1
            seen.append(d["data"][0]["attributes"]["files"][0]["file_id"])
        counts = [x["download_count"] for x in manifest["candidates"] if str(x["file_id"]) in map(str, seen)]
        assert len(set(seen)) == n and counts == sorted(counts, reverse=True)
        empty = c.get(f"{srv.api_url}/subtitles", params={"imdb_id": 1, "languages": "en"}, headers=_auth(srv)).json()
        assert empty == {"total_pages": 0, "total_count": 0, "per_page": 1, "page": 1, "data": []}


def test_machine_translated_filter_defaults(world, manifest):
    mt = next(c for c in manifest["candidates"] if c["machine_translated"])
    params = {"imdb_id": int(mt["imdb_id"][2:]), "languages": mt["language"]}
    with OpenSubtitlesFixture(world) as srv, _client() as c:
        def ids(**extra):
            d = c.get(f"{srv.api_url}/subtitles", params={**params, **extra}, headers=_auth(srv)).json()
            return {i["attributes"]["files"][0]["file_id"] for i in d["data"]}
        assert int(mt["file_id"]) not in ids()  # the real API's default: machine_translated=exclude
        assert int(mt["file_id"]) in ids(machine_translated="include")


# --------------------------------------------------------------------------------------------
# Fault modes
# --------------------------------------------------------------------------------------------
def _sequence(world, manifest, faults, config):
    """A fixed request sequence; returns [(status, fault)] as the server saw it."""
    cands = manifest["candidates"][:6]
    with OpenSubtitlesFixture(world, faults=faults, config=config) as srv, _client() as c:
        token = None
        for _ in range(5):
            r = c.post(f"{srv.api_url}/login", json={"username": srv.username, "password": srv.password},
                       headers=_auth(srv), timeout=5.0)
            if r.status_code == 200:
                token = r.json()["token"]
                break
        assert token
        for cand in cands:
            for _ in range(6):
                try:
                    r = c.get(f"{srv.api_url}/subtitles", params={"imdb_id": int(cand["imdb_id"][2:]),
                                                                  "languages": cand["language"]}, headers=_auth(srv))
                except httpx.HTTPError:
                    continue
                if r.status_code == 200 and r.headers["content-type"].startswith("application/json"):
                    break
            for _ in range(6):
                try:
                    r = c.post(f"{srv.api_url}/download", json={"file_id": int(cand["file_id"])},
                               headers=_auth(srv, token))
                except httpx.HTTPError:
                    continue
                if r.status_code == 200 and r.headers["content-type"].startswith("application/json"):
                    link = r.json()["link"]
                    for _ in range(6):
                        try:
                            f = c.get(link)
                        except httpx.HTTPError:
                            continue
                        if f.status_code == 200:
                            assert f.content == (world / cand["path"]).read_bytes()
                            break
                    else:
                        raise AssertionError("file never served")
                    break
            else:
                raise AssertionError("download never granted")
        return [(e.status, e.fault) for e in srv.log], srv.faults_injected()


def test_every_fault_mode_is_injected_deterministically_and_recoverable(world, manifest):
    cfg = FaultConfig(slow_long_s=0.6, slow_delay_s=0.01, retry_after_s=0, rate_429_period=7, key_fault_every=1)
    first, injected = _sequence(world, manifest, ["rate_429", "server_5xx", "slow", "truncated", "html_body"], cfg)
    second, _ = _sequence(world, manifest, "rate_429,server_5xx,slow,truncated,html_body", cfg)
    assert first == second
    for mode in ("rate_429", "server_5xx", "slow", "truncated", "html_body"):
        assert injected[mode] > 0, (mode, injected)
    statuses = {s for s, _ in first}
    assert {200, 429, 503, 502} <= statuses
    # each per-key fault is bounded: no key fails more than server_5xx_repeat (2) times in a row
    assert max(run for run in _runs(first)) <= 2 + cfg.rate_429_burst


def _runs(log):
    run, out = 0, [0]
    for status, fault in log:
        run = run + 1 if fault and fault != "slow" else 0
        out.append(run)
    return out


def test_truncated_body_is_shorter_than_content_length(world, manifest):
    with OpenSubtitlesFixture(world, faults="truncated") as srv, _client() as c:
        token = _login(c, srv)
        for cand in manifest["candidates"][:40]:
            link = c.post(f"{srv.api_url}/download", json={"file_id": int(cand["file_id"])},
                          headers=_auth(srv, token)).json()["link"]
            if srv.plan.mode_for(f"file:{link.split('/')[4]}", ("server_5xx", "slow", "truncated")) == "truncated":
                break
        else:
            pytest.fail("no link among 40 selected for truncation")
        path = link[len(srv.root_url):]
        with socket.create_connection(("127.0.0.1", srv.port), timeout=5) as s:
            s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
            raw = b""
            for _ in range(10_000):
                chunk = s.recv(65536)
                if not chunk:
                    break
                raw += chunk
        head, _, body = raw.partition(b"\r\n\r\n")
        declared = int(re.search(rb"Content-Length: (\d+)", head).group(1))
        full = (world / cand["path"]).read_bytes()
        assert declared == len(full) and len(body) == len(full) // 2 and body == full[: len(full) // 2]
        assert c.get(link).content == full  # the retry gets everything
        with pytest.raises(httpx.RemoteProtocolError):  # what a client sees on a truncated body
            for cand2 in manifest["candidates"][40:80]:
                link2 = c.post(f"{srv.api_url}/download", json={"file_id": int(cand2["file_id"])},
                               headers=_auth(srv, token)).json()["link"]
                c.get(link2)


def test_slow_delays_and_one_long_delay(world, manifest):
    cfg = FaultConfig(slow_delay_s=0.2, slow_long_s=1.0)
    with OpenSubtitlesFixture(world, faults="slow", config=cfg) as srv, _client() as c:
        timings = []
        for cand in manifest["candidates"][:12]:
            t = time.monotonic()
            r = c.get(f"{srv.api_url}/subtitles", params={"imdb_id": int(cand["imdb_id"][2:]), "languages": cand["language"]},
                      headers=_auth(srv))
            timings.append((time.monotonic() - t, r.status_code))
        assert all(s == 200 for _, s in timings)
        injected = srv.faults_injected()
        # what the server did, by its own count: one long delay (above a 1 s client timeout), and
        # short ones; the clock only gives lower bounds, which a loaded machine cannot break
        assert srv.plan.injected["slow_long"] == 1 and injected["slow"] >= 2  # the long one among them
        assert sum(t >= 0.95 for t, _ in timings) >= 1
        assert sum(t >= 0.18 for t, _ in timings) >= injected["slow"]


def test_html_body_replaces_json_once(world, manifest):
    cand = manifest["candidates"][0]
    num = int(cand["imdb_id"][2:])
    langs = ("en", "ar", "id", "fa", "ro", "vi")
    with OpenSubtitlesFixture(world, faults="html_body") as srv, _client() as c:
        predicted = {lang: srv.plan.mode_for(f"search?imdb_id={num}&languages={lang}", ("html_body",)) == "html_body"
                     for lang in langs}
        assert any(predicted.values()) and not all(predicted.values())
        for lang in langs:
            r = c.get(f"{srv.api_url}/subtitles", params={"imdb_id": num, "languages": lang}, headers=_auth(srv))
            is_html = r.headers["content-type"].startswith("text/html")
            assert is_html == predicted[lang], lang
            if is_html:
                assert r.status_code == 200 and r.content == CLOUDFLARE_HTML
            again = c.get(f"{srv.api_url}/subtitles", params={"imdb_id": num, "languages": lang}, headers=_auth(srv))
            assert again.headers["content-type"].startswith("application/json")


def test_rate_429_bursts_with_retry_after(world):
    cfg = FaultConfig(rate_429_period=5, rate_429_burst=2, rate_429_offset=1, retry_after_s=3)
    with OpenSubtitlesFixture(world, faults="rate_429", config=cfg) as srv, _client() as c:
        got = [c.get(f"{srv.api_url}/subtitles", params={"imdb_id": 1}, headers=_auth(srv)) for _ in range(11)]
        assert [r.status_code for r in got] == [200, 429, 429, 200, 200, 200, 429, 429, 200, 200, 200]
        r429 = got[1]
        assert r429.headers["retry-after"] == "3" and r429.headers["ratelimit-remaining"] == "0"
        assert r429.json() == {"message": "API rate limit exceeded"}


def test_enforced_request_rate(world):
    with OpenSubtitlesFixture(world, enforce_rps=5) as srv, _client() as c:
        statuses = [c.get(f"{srv.api_url}/subtitles", params={"imdb_id": 1}, headers=_auth(srv)).status_code
                    for _ in range(8)]
        assert statuses[:5] == [200] * 5 and 429 in statuses[5:]
        time.sleep(1.05)
        assert c.get(f"{srv.api_url}/subtitles", params={"imdb_id": 1}, headers=_auth(srv)).status_code == 200


def test_server_5xx_then_normal(world):
    cfg = FaultConfig(server_5xx_repeat=2)
    with OpenSubtitlesFixture(world, faults="server_5xx", config=cfg) as srv, _client() as c:
        for imdb in range(1, 40):
            key = f"search?imdb_id={imdb}"
            if srv.plan.mode_for(key, ("server_5xx",)) == "server_5xx":
                break
        else:
            pytest.fail("no key selected for 5xx among 39")
        got = [c.get(f"{srv.api_url}/subtitles", params={"imdb_id": imdb}, headers=_auth(srv)) for _ in range(3)]
        assert [r.status_code for r in got] == [503, 502, 200]
        assert b"Guru Meditation" in got[0].content and b"cloudflare" in got[1].content.lower()


def test_stop_is_prompt_and_frees_the_port(world):
    srv = OpenSubtitlesFixture(world, faults="slow", config=FaultConfig(slow_long_s=30, slow_delay_s=30)).start()
    port = srv.port
    imdb = next(i for i in range(1, 50) if srv.plan.mode_for(f"search?imdb_id={i}", ("slow",)) == "slow")
    with _client() as c:
        with pytest.raises(httpx.ReadTimeout):
            c.get(f"{srv.api_url}/subtitles", params={"imdb_id": imdb}, headers=_auth(srv), timeout=0.3)
    stopper = threading.Thread(target=srv.stop, daemon=True)
    stopper.start()  # a handler sleeps 30 s: stop() must not wait for it (hang guard, not a speed check)
    stopper.join(timeout=25)
    assert not stopper.is_alive(), "stop() waited for the sleeping handler"
    assert not srv.running
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=1).close()


# --------------------------------------------------------------------------------------------
# SubDL
# --------------------------------------------------------------------------------------------
def test_subdl_shapes_auth_and_zip(world, manifest):
    cand = next(c for c in manifest["candidates"] if c["rank"] == 1)
    with SubDLFixture(world) as srv, _client() as c:
        base = {"imdb_id": cand["imdb_id"], "languages": cand["language"].upper()}
        assert c.get(f"{srv.api_url}/subtitles", params=base).status_code == 401
        bad = c.get(f"{srv.api_url}/subtitles", params={**base, "api_key": "nope"})
        assert bad.status_code == 401 and bad.json()["status"] is False
        ok = c.get(f"{srv.api_url}/subtitles", params={**base, "api_key": srv.api_key, "subs_per_page": 30}).json()
        assert set(ok) == {"status", "results", "subtitles", "totalPages", "currentPage"} and ok["status"] is True
        assert set(ok["results"][0]) >= {"sd_id", "type", "name", "imdb_id", "tmdb_id", "first_air_date", "year"}
        assert ok["results"][0]["imdb_id"] == cand["imdb_id"]
        item = ok["subtitles"][0]
        assert set(item) >= {"release_name", "name", "lang", "author", "url", "season", "episode", "language", "hi"}
        assert item["language"] == cand["language"].upper() and item["url"].startswith("/subtitle/")
        assert item["url"].endswith(f"?api_key={srv.api_key}")  # spliced, as reported for the real API
        zid = item["url"].split("/")[2].split(".zip")[0]
        assert zid.endswith(f"-{cand['file_id']}")
        z = c.get(f"{srv.download_url}/subtitle/{zid}.zip")
        assert z.status_code == 200 and z.headers["content-type"] == "application/zip"
        with zipfile.ZipFile(io.BytesIO(z.content)) as zf:
            (info,) = zf.infolist()
            assert info.filename.endswith(".srt") and zf.read(info) == (world / cand["path"]).read_bytes()
        assert c.get(f"{srv.download_url}/subtitle/{zid}.zip").content == z.content  # deterministic
        missing = c.get(f"{srv.api_url}/subtitles", params={"imdb_id": "tt0000001", "api_key": srv.api_key})
        assert missing.status_code == 200 and missing.json() == {"status": False, "error": "can't find movie or tv"}
        paged = c.get(f"{srv.api_url}/subtitles", params={**base, "api_key": srv.api_key, "subs_per_page": 1,
                                                          "page": 2}).json()
        assert paged["currentPage"] == 2 and paged["totalPages"] >= 2 and len(paged["subtitles"]) == 1
        assert all(e.query.count("***") == ("api_key" in e.query) for e in srv.log)  # the log masks the key
        assert not any(srv.api_key in e.query for e in srv.log)


def test_subdl_zip_faults_list_malicious_archives_first(world, manifest):
    cand = next(c for c in manifest["candidates"] if c["rank"] == 1)
    with SubDLFixture(world, faults="zip_bomb,zip_slip") as srv, _client() as c:
        d = c.get(f"{srv.api_url}/subtitles", params={"imdb_id": cand["imdb_id"], "languages": cand["language"],
                                                      "api_key": srv.api_key, "subs_per_page": 30}).json()
        first_two = [s["release_name"] for s in d["subtitles"][:2]]
        assert first_two == ["cinesub.fixture.zip_bomb", "cinesub.fixture.zip_slip"]
        for s in d["subtitles"][:2]:
            z = c.get(f"{srv.download_url}{s['url'].split('?')[0]}").content
            names = zipfile.ZipFile(io.BytesIO(z)).namelist()
            if s["release_name"].endswith("zip_slip"):
                assert any(n.startswith("../") for n in names) and any(n.startswith("/") for n in names)
            else:
                info = zipfile.ZipFile(io.BytesIO(z)).getinfo("movie.srt")
                assert info.file_size >= 32 * 1024 * 1024 and len(z) < info.file_size / 100
