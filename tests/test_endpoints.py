"""Every remote base URL is a setting under ``[endpoints]`` (cinesub/settings.py EndpointSettings):
read from env vars and config files, validated (a bad URL is one ConfigError line), outside the
config hash, userinfo passwords redacted; the deprecated names fill it. The live environment's
clients (OpenSubtitles, SubDL, the Internet Archive, Gemini) talk to whatever the endpoints say —
here the loopback fixtures, through the same code that talks to the real services — and the
sample environment is one such replay."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from pydantic import SecretStr

from cinesub.errors import ConfigError
from cinesub.rawstore import RawStore
from cinesub.records import Candidate
from cinesub.settings import DEFAULT_ENDPOINTS, EndpointSettings, Settings, load_settings, redact_url
from flows.env.live import LiveEnvironment
from flows.env.sample import SampleEnvironment, fixture_endpoints

REAL = {
    "kim": "https://kids-in-mind.com",
    "csm": "https://www.commonsensemedia.org",
    "imdb": "https://www.imdb.com",
    "imdb_datasets": "https://datasets.imdbws.com",
    "opensubtitles": "https://api.opensubtitles.com/api/v1",
    "subdl": "https://api.subdl.com/api/v1",
    "subdl_download": "https://dl.subdl.com",
    "internet_archive": "https://archive.org",
    "gemini": "https://generativelanguage.googleapis.com",
}


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    import os

    for var in list(os.environ):
        if var.upper().startswith("CINESUB_") and var.upper() != "CINESUB_HOME":
            monkeypatch.delenv(var, raising=False)
    for var in ("GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(var, raising=False)


def _toml(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "cinesub.toml"
    p.write_text(text, encoding="utf-8")
    return p


# -- settings -------------------------------------------------------------------------------------
def test_defaults_are_the_real_services(tmp_path):
    assert load_settings(None, tmp_path).endpoints.model_dump() == REAL == DEFAULT_ENDPOINTS


def test_endpoints_from_env_vars_and_toml(monkeypatch, tmp_path):
    cfg = _toml(tmp_path, '[endpoints]\nkim = "http://127.0.0.1:8001/kim/"\nimdb = "https://mirror.example/imdb"\n')
    monkeypatch.setenv("CINESUB_ENDPOINTS__IMDB", "http://proxy.example:3128/imdb")  # env beats the file
    monkeypatch.setenv("CINESUB_ENDPOINTS__INTERNET_ARCHIVE", "http://127.0.0.1:9")
    ep = load_settings(cfg, tmp_path).endpoints
    assert ep.kim == "http://127.0.0.1:8001/kim"  # the trailing slash dropped
    assert ep.imdb == "http://proxy.example:3128/imdb"
    assert ep.internet_archive == "http://127.0.0.1:9"
    assert ep.csm == REAL["csm"] and ep.opensubtitles == REAL["opensubtitles"]


@pytest.mark.parametrize("bad", ["ftp://mirror.example/kim", "kids-in-mind.com", "https://", "http://host:99999",
                                 "https://host/kim?x=1", "http://ho st/kim", ""])
def test_a_bad_url_is_one_config_error_line(monkeypatch, tmp_path, bad):
    cfg = _toml(tmp_path, f'[endpoints]\ncsm = "{bad}"\n')
    with pytest.raises(ConfigError) as e:
        load_settings(cfg, tmp_path)
    msg = str(e.value)
    assert "\n" not in msg and "endpoints.csm" in msg and e.value.reason == "config_invalid"
    monkeypatch.setenv("CINESUB_ENDPOINTS__SUBDL", bad)
    with pytest.raises(ConfigError) as e:
        load_settings(None, tmp_path)
    assert "\n" not in str(e.value) and "endpoints.subdl" in str(e.value)


def test_an_unknown_endpoint_is_named_with_a_suggestion(monkeypatch, tmp_path):
    with pytest.raises(ConfigError) as e:
        load_settings(_toml(tmp_path, '[endpoints]\nopensubtitle = "http://a.example"\n'), tmp_path)
    assert "endpoints.opensubtitle" in str(e.value) and "endpoints.opensubtitles" in str(e.value)
    monkeypatch.setenv("CINESUB_ENDPOINTS__GEMNI", "http://a.example")
    with pytest.raises(ConfigError) as e:
        load_settings(None, tmp_path)
    assert "CINESUB_ENDPOINTS__GEMINI" in str(e.value)


def test_endpoints_are_not_in_the_config_hash(tmp_path):
    base = load_settings(None, tmp_path)
    moved = load_settings(None, tmp_path, endpoints={k: f"http://127.0.0.1:{i + 1}/x" for i, k in enumerate(REAL)})
    old_names = load_settings(None, tmp_path, providers={"opensubtitles_url": "http://127.0.0.1:1/api/v1",
                                                         "subdl_url": "http://127.0.0.1:2/api/v1"},
                              curation={"gemini_base_url": "http://127.0.0.1:3"})
    assert moved.endpoints != base.endpoints and old_names.endpoints != base.endpoints
    assert moved.config_hash() == old_names.config_hash() == base.config_hash()
    assert load_settings(None, tmp_path, seed=8).config_hash() != base.config_hash()  # the hash does move


def test_userinfo_password_is_redacted_in_public_dict(tmp_path):
    s = load_settings(None, tmp_path, endpoints={"imdb": "https://curator:s3cret-pw@proxy.example:8443/imdb"},
                      providers={"subdl_url": "https://bob:hunter2@sub.example/api/v1"})
    assert s.endpoints.imdb == "https://curator:s3cret-pw@proxy.example:8443/imdb"  # the client still gets it
    pub = s.public_dict()
    assert pub["endpoints"]["imdb"] == "https://curator:***@proxy.example:8443/imdb"
    assert pub["endpoints"]["subdl"] == pub["providers"]["subdl_url"] == "https://bob:***@sub.example/api/v1"
    assert pub["endpoints"]["kim"] == REAL["kim"]  # not secret: kept
    text = json.dumps(pub)
    assert "s3cret-pw" not in text and "hunter2" not in text
    assert redact_url("https://token@host.example/x") == "https://token@host.example/x"  # no password part


def test_deprecated_names_fill_the_endpoints(monkeypatch, tmp_path):
    cfg = _toml(tmp_path, '[providers]\nopensubtitles_url = "http://127.0.0.1:7001/api/v1"\n'
                          '[hollywood]\nia_host = "127.0.0.1:7002"\n')
    monkeypatch.setenv("CINESUB_CURATION__GEMINI_BASE_URL", "http://127.0.0.1:7003")
    monkeypatch.setenv("CINESUB_PROVIDERS__SUBDL_URL", "https://subdl.mirror.example/api/v1/")
    ep = load_settings(cfg, tmp_path).endpoints
    assert ep.opensubtitles == "http://127.0.0.1:7001/api/v1"
    assert ep.internet_archive == "http://127.0.0.1:7002"  # a loopback host: plain HTTP, as before
    assert ep.gemini == "http://127.0.0.1:7003"
    assert ep.subdl == "https://subdl.mirror.example/api/v1"
    assert Settings(hollywood={"ia_host": "ia.mirror.example"}).endpoints.internet_archive == "https://ia.mirror.example"
    # the same URL under both names is fine; two different ones are a user error
    same = load_settings(None, tmp_path, endpoints={"opensubtitles": "http://127.0.0.1:7001/api/v1"},
                         providers={"opensubtitles_url": "http://127.0.0.1:7001/api/v1"})
    assert same.endpoints.opensubtitles == "http://127.0.0.1:7001/api/v1"
    with pytest.raises(ConfigError) as e:
        load_settings(cfg, tmp_path, endpoints={"opensubtitles": "http://127.0.0.1:9999/api/v1"})
    assert "\n" not in str(e.value) and "set only endpoints.opensubtitles" in str(e.value)
    with pytest.raises(ConfigError) as e:
        load_settings(None, tmp_path, hollywood={"ia_host": "ftp://ia.example"})
    assert "hollywood.ia_host" in str(e.value)


# -- the live clients talk to whatever the endpoints say ----------------------------------------
def _live(tmp_path: Path, **endpoints: str) -> Settings:
    return load_settings(None, tmp_path, endpoints=endpoints)


def test_live_providers_use_the_endpoints(world, manifest, tmp_path):
    from fixtures import OpenSubtitlesFixture, SubDLFixture

    with OpenSubtitlesFixture(world) as os_fx, SubDLFixture(world) as sd_fx:
        s = _live(tmp_path, opensubtitles=os_fx.api_url, subdl=sd_fx.api_url, subdl_download=sd_fx.download_url)
        s.providers.requests_per_second = 500.0
        s.providers.opensubtitles_api_key = SecretStr(os_fx.api_key)
        s.providers.opensubtitles_username, s.providers.opensubtitles_password = os_fx.username, SecretStr(os_fx.password)
        s.providers.subdl_api_key = SecretStr(sd_fx.api_key)
        providers = LiveEnvironment(s).subtitle_providers()
        assert [p.name for p in providers] == ["opensubtitles", "subdl"]
        osp, sdp = providers
        assert (osp.base_url, sdp.base_url, sdp.download_url) == (os_fx.api_url, sd_fx.api_url, sd_fx.download_url)
        by_pair = {(c["imdb_id"], c["language"]): c for c in manifest["candidates"]
                   if not (c["machine_translated"] or c["ai_translated"])}
        (tt, lang), want = sorted(by_pair.items())[0]
        found = osp.search(tt, lang)
        assert want["file_id"] in [c.file_id for c in found]
        cand = Candidate(imdb_id=tt, language=lang, provider="opensubtitles", file_id=want["file_id"])
        assert hashlib.sha256(osp.download(cand)).hexdigest() == want["sha256"]
        assert sdp.search(tt, lang) != []
        assert os_fx.log and sd_fx.log  # both answered the live code
        # a proxy password in an endpoint is masked in the clients' log lines like a credential
        proxied = s.model_copy(update={"endpoints": EndpointSettings(opensubtitles="https://u:pr0xy-pw@proxy.example")})
        for p in LiveEnvironment(proxied).subtitle_providers():
            assert "pr0xy-pw" not in p.redact("GET https://u:pr0xy-pw@proxy.example/subtitles failed")


def test_live_ia_client_and_gemini_use_the_endpoints(tmp_path):
    from extractors.gemini_curation import GeminiCurator
    from fixtures.gemini_server import DEFAULT_API_KEY, GeminiFixture
    from fixtures.ia_server import IAFixture

    item = tmp_path / "ia" / "ia" / "cinesub-endpoint-test"
    item.mkdir(parents=True)
    (item / "_item.json").write_text(json.dumps({"identifier": "cinesub-endpoint-test", "title": "Endpoints",
                                                 "mediatype": "texts"}))
    (item / "notes.txt").write_text("hello\n")
    with IAFixture(tmp_path / "ia") as ia, GeminiFixture() as gem:
        s = _live(tmp_path / "home", internet_archive=f"http://{ia.host}", gemini=gem.base_url)
        s.curation.gemini_api_key = SecretStr(DEFAULT_API_KEY)
        env = LiveEnvironment(s)
        client = env.ia_client(RawStore(tmp_path / "raw"))
        assert client.metadata("cinesub-endpoint-test")["title"] == "Endpoints"
        assert ia.count("metadata") == 1
        ep = env.gemini_endpoint()
        assert ep is not None and ep.base_url == gem.base_url and ep.api_key == DEFAULT_API_KEY
        got, reason = GeminiCurator(ep.api_key, model="gemini-fixture-1", base_url=ep.base_url).clean(
            "plot", "A clerk finds a map. (Source: Example Wiki)")
        assert reason is None and got is not None and len(gem.requests) == 1


def test_live_ia_endpoint_must_be_a_host_root(tmp_path):
    env = LiveEnvironment(_live(tmp_path, internet_archive="https://mirror.example/ia"))
    with pytest.raises(ValueError, match="host root"):
        env.ia_client(RawStore(tmp_path / "raw"))


# -- the sample environment is one replay ---------------------------------------------------------
def test_sample_environment_overlays_the_fixture_urls(tmp_path):
    s = _live(tmp_path, csm="https://csm.mirror.example")
    served = {"pages": {"kim": "http://127.0.0.1:5/kim", "imdb": "http://127.0.0.1:5/imdb",
                        "imdb_datasets": "http://127.0.0.1:5/imdb/datasets"},
              "opensubtitles": "http://127.0.0.1:6/api/v1", "faults": ["slow"]}
    ep = fixture_endpoints(s.endpoints, served)
    assert isinstance(ep, EndpointSettings)
    assert (ep.kim, ep.imdb, ep.imdb_datasets) == ("http://127.0.0.1:5/kim", "http://127.0.0.1:5/imdb",
                                                    "http://127.0.0.1:5/imdb/datasets")
    assert ep.opensubtitles == "http://127.0.0.1:6/api/v1"
    assert ep.csm == "https://csm.mirror.example" and ep.gemini == REAL["gemini"]  # not served: the settings'
    # the older names of stage tests that attach to running servers
    env = SampleEnvironment.attached(s, endpoints={"ia_host": "127.0.0.1:7", "gemini_url": "http://127.0.0.1:8"})
    assert env.service_endpoints().internet_archive == "http://127.0.0.1:7"
    assert env.service_endpoints().gemini == "http://127.0.0.1:8"


def test_sample_providers_are_the_live_code_on_fixture_endpoints(world, manifest, tmp_path):
    from fixtures import OpenSubtitlesFixture, SubDLFixture

    from flows.env.sample import sample_credentials

    s = load_settings(None, tmp_path)
    creds = sample_credentials(s)  # what the sample build starts its fixtures with
    with OpenSubtitlesFixture(world, api_key=creds["api_key"], username=creds["username"],
                              password=creds["password"]) as os_fx, \
            SubDLFixture(world, api_key=creds["subdl_api_key"]) as sd_fx:
        env = SampleEnvironment.attached(s, world=world, endpoints={
            "opensubtitles": os_fx.api_url, "subdl": sd_fx.api_url, "subdl_download": sd_fx.download_url})
        osp, sdp = env.subtitle_providers()
        assert (osp.base_url, sdp.base_url, sdp.download_url) == (os_fx.api_url, sd_fx.api_url, sd_fx.download_url)
        tt, lang = sorted({(c["imdb_id"], c["language"]) for c in manifest["candidates"]})[0]
        assert osp.search(tt, lang) != [] and sdp.search(tt, lang) != []
