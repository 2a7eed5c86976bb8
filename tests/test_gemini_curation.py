"""Gemini-assisted curation pass (SPEC A10): the real google-genai client against the loopback
fixture (fixtures/gemini_server.py) — JSON schema request, caching, faults, grounding, fallback."""

from __future__ import annotations

import logging

import pytest

from extractors.gemini_curation import GeminiCleaned, GeminiCurator, assisted_clean, cache_key
from fixtures.gemini_server import DEFAULT_API_KEY, GeminiFixture, fixture_model

TEXT = "A girl finds a dragon. Filming took place in Wales. She hides it in the barn."
EXPECTED = {"clean": "A girl finds a dragon. She hides it in the barn.",
            "removed": [{"text": "Filming took place in Wales.", "reason": "external: filming"}]}


@pytest.fixture()
def server():
    with GeminiFixture() as srv:
        yield srv


def _curator(srv, **kw):
    kw.setdefault("retry_initial_delay_s", 0.01)
    return GeminiCurator(DEFAULT_API_KEY, model=kw.pop("model", "gemini-fixture-1"), base_url=srv.base_url, **kw)


def test_fixture_model_is_deterministic():
    assert fixture_model(TEXT) == EXPECTED


def test_clean_sends_json_schema_request_and_parses(server):
    cur = _curator(server, thinking_level="low")
    got, reason = cur.clean("plot", TEXT)
    assert reason is None and got == EXPECTED
    req = server.requests[-1]
    assert req["model"] == "gemini-fixture-1"
    cfg = req["generationConfig"]
    assert cfg["responseMimeType"] == "application/json"
    schema = cfg.get("responseSchema") or cfg.get("responseJsonSchema")
    assert set(schema["properties"]) == {"clean", "removed"}
    assert str(cfg["thinkingConfig"]).upper().count("LOW") == 1
    assert TEXT in req["prompt"] and "external" in req["system"]
    assert [e.status for e in server.log] == [200]


def test_cache_by_model_field_and_text_hash(server):
    shared: dict = {}
    cur = _curator(server, cache=shared)
    assert cur.clean("plot", TEXT)[0] == EXPECTED
    assert cur.clean("plot", TEXT)[0] == EXPECTED
    assert cur.calls == 1 and server.count("generate") == 1
    assert cache_key("gemini-fixture-1", "plot", TEXT) in shared
    cur.clean("synopsis", TEXT)  # another field: another entry
    other = _curator(server, model="gemini-fixture-2", cache=shared)
    other.clean("plot", TEXT)  # another model: another entry
    assert server.count("generate") == 3 and len(shared) == 3
    again = _curator(server, cache=shared)  # a new curator reusing the dict: no request
    assert again.clean("plot", TEXT)[0] == EXPECTED and server.count("generate") == 3


def test_500_once_is_retried_by_the_client(server):
    server.queue("500")
    got, reason = _curator(server).clean("plot", TEXT)
    assert reason is None and got == EXPECTED
    assert [e.status for e in server.log] == [500, 200]


def test_500_without_retries_gives_reason_and_rules_stand(server):
    server.queue("500")
    cur = _curator(server, attempts=1)
    assert cur.clean("plot", TEXT) == (None, "http_500")
    assert cur.cache == {}  # failures are not cached
    server.queue("503")
    res, reason = assisted_clean("plot", TEXT + " It premiered at the 2015 Sundance Film Festival.", cur)
    assert reason == "http_503" and res.method == "rules"
    assert res.clean == "A girl finds a dragon. She hides it in the barn."  # the rule-based result
    assert cur.clean("plot", TEXT) == (EXPECTED, None)  # recovers on the next call


@pytest.mark.parametrize("fault,reason", [("malformed", "malformed_json"), ("schema", "schema_mismatch"),
                                          ("ungrounded", "not_grounded"), ("blocked", "blocked")])
def test_bad_answers_give_reason_codes(server, fault, reason):
    server.queue(fault)
    cur = _curator(server)
    assert cur.clean("storyline", TEXT) == (None, reason)
    assert cur.cache == {} and server.pending_faults == []


def test_wrong_key_and_unreachable_host_and_bad_input():
    with GeminiFixture() as srv:
        bad = GeminiCurator("not-the-key", base_url=srv.base_url, attempts=1)
        assert bad.clean("plot", TEXT) == (None, "http_400")
        assert "not-the-key" not in repr(bad)
        url = srv.base_url
    gone = GeminiCurator(DEFAULT_API_KEY, base_url=url, attempts=1, timeout_s=2)
    assert gone.clean("plot", TEXT) == (None, "transport_error")
    assert gone.clean("plot", "  ") == (None, "empty_input")
    assert gone.clean("tagline", TEXT) == (None, "unknown_field")
    with pytest.raises(ValueError):
        GeminiCurator("")


def test_api_key_never_logged(server, caplog):
    caplog.set_level(logging.DEBUG)
    server.queue("500")
    cur = _curator(server, attempts=1)
    cur.clean("plot", TEXT)
    assert DEFAULT_API_KEY not in caplog.text and DEFAULT_API_KEY not in repr(cur)
    assert "http_500" in caplog.text


def test_assisted_clean_combines_rules_and_gemini(server):
    cur = _curator(server)
    raw = "Plot summary: A girl finds a dragon. It was the box office hit of 1990. Filming took place in Wales. " \
          "She hides it in the barn. Its budget of ten coins is spent on sweets."
    res, reason = assisted_clean("plot", raw, cur)
    assert reason is None and res.method == "rules+gemini:gemini-fixture-1"
    assert res.raw == raw
    # the fixture model removes "budget of" sentences the rules keep (no currency amount)
    assert res.clean == "A girl finds a dragon. She hides it in the barn."
    rules = [r["rule"] for r in res.removed]
    assert rules == ["editorial_label", "production_box_office", "production_filming", "gemini"]
    g = res.removed[-1]
    assert raw[g["span"][0]:g["span"][1]] == "Its budget of ten coins is spent on sweets."
    # Gemini saw the rule-cleaned text only
    assert "box office" not in server.requests[-1]["prompt"]
    # no curator: rules only
    assert assisted_clean("plot", raw, None)[0].method == "rules"


def test_schema_model_round_trip():
    assert GeminiCleaned.model_validate_json('{"clean": "x", "removed": []}').clean == "x"
