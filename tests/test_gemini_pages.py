"""Gemini page extractor (extractors/variety/gemini_pages.py): the real google-genai client
against the loopback fixture (fixtures/gemini_pages_server.py) answering from the sample world's
gold tuples with planted errors — rows vs gold, request shape, cache (zero requests on a rerun),
faults with reason codes, batch mode, and the API key never in any output or log."""

from __future__ import annotations

import hashlib
import json
import logging
from collections import Counter

import pytest

from cinesub.sample.variety import generate_variety_world, load_gold, write_gemini_examples
from extractors.variety.gemini_pages import (
    EXAMPLES_DIR,
    PROMPT_VERSION,
    ROW_FIELDS,
    GeminiPageExtractor,
    load_examples,
    page_refs_from_world,
    parse_answer,
    resolve_api_key,
)
from fixtures.gemini_pages_server import GeminiPagesFixture

KEY = "fixture-pages-key-SECRET-9f8e7d6c5b4a"
MODEL = "gemini-fixture-pages"


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("vworld")
    manifest = generate_variety_world(root, seed=1934)
    return root, manifest


@pytest.fixture()
def server(world):
    with GeminiPagesFixture(world[0], api_key=KEY) as srv:
        yield srv


def _extractor(srv, tmp_path, **kw):
    kw.setdefault("retry_initial_delay_s", 0.01)
    kw.setdefault("cache_dir", tmp_path / "gemini-cache")
    return GeminiPageExtractor(KEY, model=kw.pop("model", MODEL), base_url=srv.base_url, **kw)


def _key(r):
    return (r["item_id"], r["page"], r["theater"], r["city"], r["movie"], r["week"], r["gross"])


def _expected(world_dir, manifest):
    """Gold tuples with the planted errors applied (what the fixture answers)."""
    exp = Counter()
    planted = {(e["item_id"], e["page"], e["index"]): e for e in manifest["gemini_planted_errors"]}
    for (item, page), g in load_gold(world_dir).items():
        for i, t in enumerate(g["tuples"]):
            e = planted.get((item, page, i))
            if e is not None and e["kind"] == "dropped":
                continue
            t = e["answer"] if e is not None else t
            exp[(item, page, t["theater"], t["city"], t["movie"], t["week"], t["gross"])] += 1
    return exp


def test_rows_match_gold_except_the_planted_errors(server, world, tmp_path):
    root, manifest = world
    ex = _extractor(server, tmp_path)
    refs = page_refs_from_world(root)
    res = ex.extract_pages(refs)
    assert res.errors == [] and res.calls == len(refs) and server.unknown_images == 0
    assert all(tuple(r) == ROW_FIELDS for r in res.rows)
    assert {r["extractor"] for r in res.rows} == {"gemini"} and {r["model"] for r in res.rows} == {MODEL}
    got = Counter(_key(r) for r in res.rows)
    assert got == _expected(root, manifest)
    gold = Counter()
    for (item, page), g in load_gold(root).items():
        for t in g["tuples"]:
            gold[(item, page, t["theater"], t["city"], t["movie"], t["week"], t["gross"])] += 1
    missing, extra = gold - got, got - gold
    kinds = sorted(e["kind"] for e in manifest["gemini_planted_errors"])
    assert kinds == ["dropped", "swapped_week", "wrong_gross"]
    assert sum(missing.values()) == 3 and sum(extra.values()) == 2  # dropped has no extra row
    # provenance: issue date of the page, 0-based leaf index
    by_page = {(r["item_id"], r["page"]): r["issue_date"] for r in res.rows}
    assert by_page[("variety114-1934-03", 2)] == "1934-03-07" and by_page[("variety114-1934-03", 9)] == "1934-03-14"


def test_request_shape_examples_schema_and_options(server, world, tmp_path):
    ex = _extractor(server, tmp_path, thinking_level="low", media_resolution="high")
    ref = page_refs_from_world(world[0])[2]
    rows, err = ex.extract_page(ref)
    assert err is None and rows
    req = server.requests[-1]
    assert req["model"] == MODEL and req["n_images"] == 3  # two worked examples + the page
    assert req["image_sha256"] == ref.sha256
    cfg = req["generationConfig"]
    assert cfg["responseMimeType"] == "application/json"
    schema = cfg.get("responseSchema") or cfg.get("responseJsonSchema")
    assert schema["type"].upper() == "ARRAY"
    assert set(schema["items"]["properties"]) == {"theater", "city", "movie", "week", "gross", "conf"}
    assert schema["items"]["properties"]["week"]["enum"] == ["this week", "last week", "next week"]
    assert cfg["mediaResolution"] == "MEDIA_RESOLUTION_HIGH"
    assert "LOW" in json.dumps(cfg["thinkingConfig"]).upper()
    assert "Broadway" in req["system"] and "SHOWCASE" in req["system"]


def test_cache_second_run_makes_zero_requests(server, world, tmp_path):
    refs = page_refs_from_world(world[0])
    ex = _extractor(server, tmp_path)
    first = ex.extract_pages(refs)
    n = server.count("generate")
    assert n == len(refs)
    again = _extractor(server, tmp_path)  # a new process, same cache dir
    second = again.extract_pages(refs)
    assert server.count("generate") == n and second.calls == 0 and second.cache_hits == len(refs)
    assert second.rows == first.rows
    assert ex.cache_path(refs[0].sha256).parts[-2] == PROMPT_VERSION
    other = _extractor(server, tmp_path, model="gemini-other")  # another model: another cache entry
    other.extract_page(refs[0])
    assert server.count("generate") == n + 1


def test_quota_429_recorded_with_reason_and_retried_next_run(server, world, tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    refs = page_refs_from_world(world[0])[2:5]  # three pages with tuples
    ex = _extractor(server, tmp_path, attempts=2, max_workers=1)
    server.queue("429", "429")  # both attempts of the first page
    errors_path = tmp_path / "errors.jsonl"
    res = ex.extract_pages(refs, errors_path=errors_path)
    assert [(e.page, e.reason) for e in res.errors] == [(refs[0].page, "quota")]
    assert [e.status for e in server.log[:2]] == [429, 429]  # google-genai retried once (attempts=2)
    recorded = [json.loads(line) for line in errors_path.read_text().splitlines()]
    assert recorded[0]["reason"] == "quota" and recorded[0]["image_sha256"] == refs[0].sha256
    assert {r["page"] for r in res.rows} == {refs[1].page, refs[2].page}  # the other pages are kept
    rerun = ex.extract_pages(refs)  # failures are not cached: the page is asked again
    assert rerun.errors == [] and rerun.calls == 1
    # the key never shows up anywhere
    outputs = [caplog.text, errors_path.read_text(), repr(ex), json.dumps(res.rows), json.dumps(server.requests),
               str(server.log), str([vars(e) if hasattr(e, "__dict__") else e for e in res.errors])]
    assert all(KEY not in o for o in outputs)


@pytest.mark.parametrize("fault,reason", [("malformed", "malformed_json"), ("schema", "schema_mismatch"),
                                          ("blocked", "blocked")])
def test_bad_answers_get_reason_codes(server, world, tmp_path, fault, reason):
    ex = _extractor(server, tmp_path)
    ref = page_refs_from_world(world[0])[2]
    server.queue(fault)
    rows, err = ex.extract_page(ref)
    assert rows == [] and err is not None and err.reason == reason and err.page == ref.page
    assert ex.cache_path(ref.sha256).exists() is False


def test_server_error_and_wrong_key(server, world, tmp_path):
    ref = page_refs_from_world(world[0])[2]
    ex = _extractor(server, tmp_path, attempts=1)
    server.queue("503")
    assert ex.extract_page(ref)[1].reason == "server_error"
    bad = GeminiPageExtractor("wrong-key-123", model=MODEL, base_url=server.base_url, attempts=1,
                              cache_dir=tmp_path / "c2")
    err = bad.extract_page(ref)[1]
    assert err.reason == "auth_failed" and "wrong-key-123" not in err.detail


def test_batch_mode_gives_the_same_rows(server, world, tmp_path):
    refs = page_refs_from_world(world[0])
    seq = _extractor(server, tmp_path, cache_dir=tmp_path / "seq").extract_pages(refs)
    bat = _extractor(server, tmp_path, cache_dir=tmp_path / "bat").extract_pages_batch(refs, poll_interval_s=0.01)
    assert bat.errors == [] and bat.calls == 1 and server.count("batch_create") == 1
    assert Counter(_key(r) for r in bat.rows) == Counter(_key(r) for r in seq.rows)
    again = _extractor(server, tmp_path, cache_dir=tmp_path / "bat").extract_pages_batch(refs, poll_interval_s=0.01)
    assert again.calls == 0 and server.count("batch_create") == 1


def test_shipped_examples_are_the_generator_output(tmp_path):
    written = write_gemini_examples(tmp_path)
    for p in written:
        assert p.read_bytes() == (EXAMPLES_DIR / p.name).read_bytes(), p.name
    ex = load_examples()
    assert len(ex) == 2
    teaches = json.loads(ex[0][1]) + json.loads(ex[1][1])
    assert {"New York"} <= {t["city"] for t in teaches} and any(t["theater"].startswith("SHOWCASE:") for t in teaches)
    assert any(t["gross"] is None and t["week"] == "next week" for t in teaches)


def test_parse_answer_and_key_resolution(monkeypatch):
    assert parse_answer("")[1] == "no_text"
    assert parse_answer("[{")[1] == "malformed_json"
    assert parse_answer('[{"theater": "X"}]')[1] == "schema_mismatch"
    assert parse_answer('[{"theater":"X","city":"Y","movie":"Z","week":"someday","gross":1,"conf":1}]')[1] == \
        "schema_mismatch"
    ok, reason = parse_answer('[{"theater":"X","city":"Y","movie":"Z","week":"last week","gross":null,"conf":0.5}]')
    assert reason is None and ok[0].gross is None
    for var in ("CINESUB_GEMINI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    assert resolve_api_key() is None
    monkeypatch.setenv("GEMINI_API_KEY", "k-from-env")
    assert resolve_api_key() == "k-from-env"
    with pytest.raises(ValueError):
        GeminiPageExtractor("")


# --------------------------------------------------------------------------------------------
# Gemini as the paper ran it (issue 17, point 4): settings, MAX_TOKENS fallback, content
# filters, rate limit on the pool, Batch jobs polled together
# --------------------------------------------------------------------------------------------
def _page_with_rows(world):
    refs = page_refs_from_world(world[0])
    return next(r for r in refs if len(load_gold(world[0])[(r.item_id, r.page)]["tuples"]) >= 4)


def test_max_tokens_is_asked_again_with_the_larger_budget(server, world, tmp_path):
    ref = _page_with_rows(world)
    plain, _ = _extractor(server, tmp_path, cache_dir=tmp_path / "plain").extract_page(ref)
    server.plant_max_tokens(ref.image, needs=20_000)
    ex = _extractor(server, tmp_path, max_output_tokens=1000, max_output_tokens_retry=30_000)
    n0 = len(server.requests)
    rows, err = ex.extract_page(ref)
    assert err is None and rows == plain
    asked = server.requests[n0:]
    assert [r["generationConfig"].get("maxOutputTokens") for r in asked] == [1000, 30_000]
    assert ex.max_tokens_retries == 1 and ex.splits == 0 and ex.calls == 2


def test_max_tokens_twice_splits_the_page_and_merges_the_halves(server, world, tmp_path):
    from extractors.gemini_pages import split_page_image

    ref = _page_with_rows(world)
    plain, _ = _extractor(server, tmp_path, cache_dir=tmp_path / "plain").extract_page(ref)
    server.plant_max_tokens(ref.image, needs=None)  # the whole page never fits
    ex = _extractor(server, tmp_path, max_output_tokens=1000, max_output_tokens_retry=30_000)
    n0 = len(server.requests)
    rows, err = ex.extract_page(ref)
    assert err is None and rows == plain  # halves merged top first: every row, in page order
    asked = server.requests[n0:]
    top, bottom = split_page_image(ref.image)
    assert [r["image_sha256"] for r in asked] == [ref.sha256, ref.sha256, hashlib.sha256(top).hexdigest(),
                                                  hashlib.sha256(bottom).hexdigest()]
    assert "top half" in asked[2]["prompt"] and "bottom half" in asked[3]["prompt"]
    assert ex.splits == 1 and server.unknown_images == 0
    again = _extractor(server, tmp_path, max_output_tokens=1000, max_output_tokens_retry=30_000)
    assert again.extract_page(ref)[0] == plain and again.calls == 0  # the merged answer is cached


def test_max_tokens_without_split_is_a_recorded_failure(server, world, tmp_path):
    ref = _page_with_rows(world)
    server.plant_max_tokens(ref.image, needs=None)
    ex = _extractor(server, tmp_path, max_output_tokens=1000, max_output_tokens_retry=30_000,
                    split_on_max_tokens=False)
    rows, err = ex.extract_page(ref)
    assert rows == [] and err.reason == "max_tokens" and "30000" in err.detail
    assert ex.cache_path(ref.sha256).exists() is False


def test_split_cuts_at_a_white_row_and_keeps_every_pixel_row(world):
    import io

    from PIL import Image

    from extractors.gemini_pages import split_page_image

    ref = _page_with_rows(world)
    top, bottom = split_page_image(ref.image)
    with Image.open(io.BytesIO(ref.image)) as im, Image.open(io.BytesIO(top)) as t, Image.open(io.BytesIO(bottom)) as b:
        assert t.size[0] == b.size[0] == im.size[0] and t.size[1] + b.size[1] == im.size[1]
        assert 0.4 * im.size[1] <= t.size[1] <= 0.6 * im.size[1]
        import numpy as np

        assert np.asarray(b.convert("L"))[0].min() > 200  # the cut runs through white paper, not print


@pytest.mark.parametrize("fault,reason,detail", [("safety", "safety", "finishReason SAFETY"),
                                                 ("blocked", "blocked", "PROHIBITED_CONTENT")])
def test_content_filters_are_recorded_with_their_reason(server, world, tmp_path, fault, reason, detail):
    ex = _extractor(server, tmp_path)
    ref = page_refs_from_world(world[0])[2]
    server.queue(fault)
    res = ex.extract_pages([ref], errors_path=tmp_path / "errors.jsonl")
    assert [(e.reason, detail in e.detail) for e in res.errors] == [(reason, True)]
    assert json.loads((tmp_path / "errors.jsonl").read_text())["reason"] == reason


def test_paper_settings_reach_the_request(server, world, tmp_path):
    from cinesub.settings import HollywoodSettings
    from extractors.gemini_pages import reader_options

    hs = HollywoodSettings()
    assert (hs.gemini_model, hs.gemini_thinking_level, hs.gemini_media_resolution) == \
        ("gemini-3-pro-preview", "high", "ultra_high")
    opts = {**reader_options(hs), "model": MODEL, "requests_per_minute": None}
    ex = _extractor(server, tmp_path, **opts)
    ex.extract_page(page_refs_from_world(world[0])[2])
    req = server.requests[-1]
    cfg = req["generationConfig"]
    assert "HIGH" in json.dumps(cfg["thinkingConfig"]).upper() and "mediaResolution" not in cfg
    assert cfg["maxOutputTokens"] == hs.gemini_max_output_tokens
    # ultra-high is per image part: both worked examples and the page
    assert req["image_media_resolution"] == [{"level": "MEDIA_RESOLUTION_ULTRA_HIGH"}] * 3
    with pytest.raises(ValueError):
        HollywoodSettings(gemini_media_resolution="huge")


class _CountingLimiter:
    """Counts tokens taken; the first ``meet`` takers wait for each other (a pool that asked one
    page after another would never get them together: the barrier breaks)."""

    def __init__(self, meet: int):
        import threading

        self.taken = 0
        self._lock = threading.Lock()
        self._barrier = threading.Barrier(meet, timeout=20)

    def acquire(self) -> float:
        with self._lock:
            self.taken += 1
            n = self.taken
        if n <= self._barrier.parties:
            self._barrier.wait()
        return 0.0


def test_pages_are_asked_concurrently_and_each_request_takes_a_rate_token(server, world, tmp_path):
    refs = page_refs_from_world(world[0])[:6]
    lim = _CountingLimiter(meet=3)
    ex = _extractor(server, tmp_path, max_workers=3, limiter=lim)
    res = ex.extract_pages(refs)
    assert res.errors == [] and lim.taken == res.calls == len({r.sha256 for r in refs})


def test_rate_limit_setting_builds_a_token_bucket(server, tmp_path):
    from extractors.http_client import NoLimit, TokenBucket

    assert isinstance(_extractor(server, tmp_path, requests_per_minute=120).limiter, TokenBucket)
    assert _extractor(server, tmp_path, requests_per_minute=120).limiter.rate == 2.0
    assert isinstance(_extractor(server, tmp_path, requests_per_minute=None).limiter, NoLimit)


def test_batch_jobs_are_polled_together(world, tmp_path):
    refs = page_refs_from_world(world[0])
    with GeminiPagesFixture(world[0], api_key=KEY, batch_pending_polls=2) as srv:
        ex = _extractor(srv, tmp_path)
        one = len(refs[0].image) + sum(len(p) for p, _ in ex.examples)
        res = ex.extract_pages_batch(refs, poll_interval_s=0.0, max_inline_bytes=one * 4)
        gets = [e.path.rsplit("/", 1)[-1] for e in srv.log if "/batches/" in e.path]
        jobs = srv.count("batch_create")
    assert res.errors == [] and jobs >= 3 and res.calls == jobs
    assert len(gets) == 3 * jobs  # two RUNNING answers and the SUCCEEDED one, per job
    # each round asks every unfinished job: the first `jobs` polls are all different jobs
    assert len(set(gets[:jobs])) == jobs and gets[:jobs] == gets[jobs:2 * jobs]


def test_batch_answer_cut_by_max_tokens_takes_the_fallback(server, world, tmp_path):
    refs = page_refs_from_world(world[0])
    ref = _page_with_rows(world)
    plain = _extractor(server, tmp_path, cache_dir=tmp_path / "plain").extract_pages(refs)
    server.plant_max_tokens(ref.image, needs=20_000)
    ex = _extractor(server, tmp_path, max_output_tokens=1000, max_output_tokens_retry=30_000)
    res = ex.extract_pages_batch(refs, poll_interval_s=0.0)
    assert res.errors == [] and Counter(_key(r) for r in res.rows) == Counter(_key(r) for r in plain.rows)
    assert ex.max_tokens_retries == 1 and res.calls == 2  # one batch job + one direct retry
