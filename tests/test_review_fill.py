"""`cinesub review fill` end to end through the real CLI, on a copy of the cached 20-film sample
build: one film's KIM key message goes missing (its KIM record loses the field, as a KIM page
without a MESSAGE block would give) and another film's CSM storyline too; a curator fills the key
message only; the rebuild keeps `keyMessage` for the whole cohort with the curated value, while
`storyline` is withheld and its gap recorded with a reason (and listed by `review list`). Also the
one-line errors for an unknown film / field and the genre mapping version in the manifest."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import duckdb
import polars as pl
import pytest
from _cli_runner import cli_env, copy_home, sample20_build

REPO = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-m", "cinesub.cli"]

pytestmark = pytest.mark.slow


def _cli(home: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run(CLI + list(args), cwd=REPO, env=cli_env(home), capture_output=True, text=True, timeout=900)
    if check:
        assert proc.returncode == 0, f"{args}: {proc.stdout[-3000:]}{proc.stderr[-6000:]}"
    return proc


def _one_error_line(proc: subprocess.CompletedProcess, reason: str) -> str:
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: ") and lines[0].endswith(f"[{reason}]"), lines[0]
    return lines[0]


@pytest.fixture(scope="module")
def filled(tmp_path_factory):
    shared_home, first = sample20_build()
    home = copy_home(shared_home, tmp_path_factory.mktemp("fill") / "home")
    with duckdb.connect(str(home / "state.duckdb")) as con:
        kept = {f: k for f, k in con.execute("SELECT field, kept FROM task_fields").fetchall()}
        cohort = [r[0] for r in con.execute(
            """SELECT f.imdb_id FROM films f JOIN film_gates g ON g.kim_id = f.kim_id AND g.dropped_at IS NULL
               ORDER BY f.imdb_id""").fetchall()]
        a, b = cohort[0], cohort[1]
        # the sources lose one value each (a KIM page without MESSAGE, a CSM page without a story)
        con.execute("""UPDATE films SET kim = json_merge_patch(kim, '{"key_message": null}') WHERE imdb_id = ?""", [a])
        con.execute("""UPDATE films SET csm = json_merge_patch(csm, '{"storyline": null}') WHERE imdb_id = ?""", [b])
    assert kept["keyMessage"] and kept["storyline"], "the first build keeps both fields"
    errors = {
        "film": _cli(home, "review", "fill", "tt0000000", "keyMessage", "--value", "x", "--by", "alice", check=False),
        "field": _cli(home, "review", "fill", a, "tagline", "--value", "x", "--by", "alice", check=False),
        "both": _cli(home, "review", "fill", a, "keyMessage", "--value", "x", "--file", str(home / "nope.txt"),
                     "--by", "alice", check=False),
        "genre": _cli(home, "review", "fill", a, "genres", "--value", "Drama, Space Opera", "--by", "alice",
                      check=False),
    }
    message = "Courage grows where care is given."
    path = home / "key_message.txt"
    path.write_text(message + "\n", encoding="utf-8")
    stored = json.loads(_cli(home, "review", "fill", a, "keyMessage", "--file", str(path), "--by", "alice",
                             "--json").stdout)
    second = json.loads(_cli(home, "build", "--sample", "--films", "20", "--json").stdout)
    listing = json.loads(_cli(home, "review", "list", "--json").stdout)
    return {"home": home, "a": a, "b": b, "message": message, "stored": stored, "errors": errors,
            "first": first, "second": second, "listing": listing}


def test_errors_are_one_line_with_a_reason_and_exit_2(filled):
    e = filled["errors"]
    assert "tt0000000" in _one_error_line(e["film"], "unknown_film")
    assert "keyMessage" in _one_error_line(e["field"], "unknown_field")  # the line lists the fields
    _one_error_line(e["both"], "review_input")
    assert "Space Opera" in _one_error_line(e["genre"], "review_input")


def test_the_fill_is_stored_with_author_and_time(filled):
    s = filled["stored"]
    assert s["imdb_id"] == filled["a"] and s["field"] == "keyMessage" and s["value"] == filled["message"]
    assert s["filled_by"] == "alice" and s["filled_at"] and s["source_file"].endswith("key_message.txt")
    with duckdb.connect(str(filled["home"] / "state.duckdb"), read_only=True) as con:
        rows = con.execute("SELECT fill_id, filled_by, CAST(value AS VARCHAR) FROM curated_values").fetchall()
    assert rows == [(s["fill_id"], "alice", json.dumps(filled["message"]))]


def test_the_rebuild_keeps_the_field_with_the_curated_value(filled):
    second, a, b = filled["second"], filled["a"], filled["b"]
    assert second["release"]["new"] is True
    rel = Path(second["release"]["path"])
    ents = {e["sources"]["imdbLink"].split("/")[-2]: e for e in map(json.loads, open(rel / "films.jsonl"))}
    assert ents[a]["keyMessage"] == filled["message"]
    assert all(e["keyMessage"] for e in ents.values())
    refs = pl.read_parquet(rel / "task_references.parquet")
    assert refs.filter(pl.col("imdb_id") == a)["key_message"].to_list() == [filled["message"]]
    # the unfilled storyline gap withholds storyline for the cohort, recorded with its reason
    assert all(e["storyline"] is None for e in ents.values())
    with duckdb.connect(str(filled["home"] / "state.duckdb"), read_only=True) as con:
        kept = dict(con.execute("SELECT field, kept FROM task_fields").fetchall())
        gaps = con.execute("SELECT imdb_id, field, status, reason, fill_id FROM task_gaps ORDER BY 1, 2").fetchall()
    assert kept["keyMessage"] is True and kept["storyline"] is False
    assert gaps == sorted([(a, "keyMessage", "filled", "source_missing", filled["stored"]["fill_id"]),
                           (b, "storyline", "missing", "source_missing", None)])
    missing = [(r["imdb_id"], r["field"], r["reason"]) for r in filled["listing"]["missing_task_values"]]
    assert missing == [(b, "storyline", "source_missing")]


def test_genres_are_core_labels_with_the_raw_ones_beside_them(filled):
    from validators.genres import core_genres

    rel = Path(filled["second"]["release"]["path"])
    man = json.loads((rel / "manifest.json").read_text())
    assert man["genre_mapping"]["version"] == "genres-v1" and man["genre_mapping"]["unmapped_raw_genres"] == 0
    ents = [json.loads(line) for line in open(rel / "films.jsonl")]
    assert all(e["genres"] and set(e["genres"]) <= set(core_genres()) for e in ents)
    raw = pl.read_parquet(rel / "raw_genres.parquet")
    assert set(raw["imdb_id"]) == {e["sources"]["imdbLink"].split("/")[-2] for e in ents}
    assert set(raw["status"]) == {"mapped"} and set(raw["mapping_version"]) == {"genres-v1"}
    assert filled["listing"]["unmapped_genres"] == []
