"""``cinesub ratings normalize`` / ``labels`` through a real subprocess (SPEC A8)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cinesub.cli", "ratings", *args],
                          capture_output=True, text=True, timeout=120)


def _json(*args: str, rc: int = 0) -> dict:
    proc = _run("normalize", "--json", "--", *args)
    assert proc.returncode == rc, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.parametrize(("country", "raw", "label", "age", "ordinal"), [
    ("United Kingdom", "UK:12A", "12", 12, 2),
    ("United Kingdom", "12A", "12", 12, 2),
    ("UK", "United Kingdom:12A::(Blu-ray rating)", "12", 12, 2),
    ("Germany", "o.Al.", "0", 0, 0),
    ("Germany", "Germany:o.Al.", "0", 0, 0),
    ("South Korea", "18", "19", 19, 3),
    ("South Korea", "South Korea:18", "19", 19, 3),
    ("Netherlands", "MG6", "6", 6, 1),
    ("France", "-12", "12", 12, 1),  # a leading '-' needs the '--' separator on the command line
    ("France", "France:-12", "12", 12, 1),
    ("USA", "R", "R", 17, 3),
    ("United States", "PG-13", "PG-13", 13, 2),
])
def test_normalize_mapped(country: str, raw: str, label: str, age: int, ordinal: int) -> None:
    out = _json(country, raw)
    assert set(out) == {"country", "label", "minimumAge", "ordinal"}
    assert out["label"] == label
    assert out["ordinal"] == ordinal
    assert out["country"] in ("United Kingdom", "Germany", "South Korea", "Netherlands", "France", "United States")
    if country in ("USA", "UK"):
        assert out["country"] == {"USA": "United States", "UK": "United Kingdom"}[country]
    assert out["minimumAge"] == age


def test_normalize_tv_rating_unmapped_exit_0() -> None:
    out = _json("USA", "TV-MA")
    assert out == {"country": "United States", "label": None, "minimumAge": None, "ordinal": None,
                   "reason": "tv_rating"}


def test_normalize_unrated_and_unknown_unmapped() -> None:
    assert _json("United States", "Not Rated")["reason"] == "unrated"
    out = _json("Sweden", "XYZ-99")
    assert out["label"] is None and out["reason"] == "unknown_label"


def test_unknown_country_exit_2_json_still_parseable() -> None:
    out = _json("Japan", "G", rc=2)
    assert out["label"] is None and out["reason"] == "other_country"
    proc = _run("normalize", "Narnia", "PG")
    assert proc.returncode == 2
    assert "unknown country" in proc.stderr


def test_prefix_naming_another_country_exit_2() -> None:
    out = _json("Germany", "UK:12A", rc=2)
    assert out["reason"] == "country_mismatch" and out["country"] == "Germany"


def test_human_output() -> None:
    proc = _run("normalize", "South Korea", "18")
    assert proc.returncode == 0
    assert "-> 19" in proc.stdout and "ordinal 3" in proc.stdout
    proc = _run("normalize", "USA", "TV-MA")
    assert proc.returncode == 0
    assert "unmapped" in proc.stdout and "tv_rating" in proc.stdout


def test_labels_lists_the_ten_spaces_in_order() -> None:
    proc = _run("labels", "--json")
    assert proc.returncode == 0, proc.stderr
    spaces = json.loads(proc.stdout)
    assert list(spaces)[0] == "Australia" and list(spaces)[-1] == "United States"
    assert len(spaces) == 10
    assert spaces["South Korea"] == ["All", "12", "15", "19"]
    one = json.loads(_run("labels", "UK", "--json").stdout)
    assert one == {"United Kingdom": ["U", "PG", "12", "15", "18"]}
