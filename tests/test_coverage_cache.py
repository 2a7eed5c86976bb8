"""The survey and cohort stages' coverage answers are cached by their inputs
(flows/stages/subtitles/common.py coverage_solver): the same answer as the solver's, computed once."""

from __future__ import annotations

import json
from types import SimpleNamespace

from flows.stages.subtitles.common import coverage_solver
from validators.coverage_optimizer import solve

PAIRS = [("f1", "en"), ("f1", "ar"), ("f2", "en"), ("f3", None), ("f4", "ar"), ("f4", "en")]


def _answer(result: dict) -> dict:
    return {k: v for k, v in result.items() if k not in ("elapsed_s", "stats")}


def test_a_cached_answer_is_the_solvers_and_only_the_same_inputs_hit(tmp_path, monkeypatch):
    ctx = SimpleNamespace(settings=SimpleNamespace(home=tmp_path))
    cached = coverage_solver(ctx)
    expected = json.loads(json.dumps(solve(PAIRS, pool=None, require=["en"], min_films=0), default=str))
    first = cached(PAIRS, pool=None, require=["en"], min_films=0)
    assert _answer(first) == _answer(expected) and not first["stats"].get("cached")

    import validators.coverage_optimizer as opt

    monkeypatch.setattr(opt, "solve", lambda *a, **k: (_ for _ in ()).throw(AssertionError("solved again")))
    again = cached(list(reversed(PAIRS)), pool=None, require=["en"], min_films=0)  # same set of pairs
    assert _answer(again) == _answer(expected) and again["stats"]["cached"] is True

    monkeypatch.undo()
    files = sorted((tmp_path / "cache" / "coverage").glob("*.json"))
    assert len(files) == 1
    # a film without attributes still counts; other arguments, other answers
    fewer = cached(PAIRS[:-3], pool=None, require=["en"], min_films=0)
    assert _answer(fewer) == _answer(json.loads(json.dumps(solve(PAIRS[:-3], pool=None, require=["en"]), default=str)))
    cached(PAIRS, pool=1, require=["en"], min_films=0)
    assert len(list((tmp_path / "cache" / "coverage").glob("*.json"))) == 3

    files[0].write_text("{truncated")  # an unreadable entry is computed again
    assert _answer(cached(PAIRS, pool=None, require=["en"], min_films=0)) == _answer(expected)
