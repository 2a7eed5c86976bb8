"""Curator decisions end to end: build the sample world (20 films) with the real CLI, record
decisions with `cinesub review decide` (replace a selected track, exclude another, repair then
retain the flagged one, repair a flagged candidate) and `cinesub review decide-link` (accept the
KIM id of the planted entity-link disagreement), rebuild, and check that the release changed
accordingly and that the history says who, when and why (`cinesub review export`)."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import duckdb
import polars as pl
import pytest
from _cli_runner import cli_env, copy_home, sample20_build

REPO = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-m", "cinesub.cli"]

pytestmark = pytest.mark.slow


def _env(home: Path, **extra: str) -> dict[str, str]:
    return cli_env(home, **extra)


def _cli(home: Path, *args: str, env: dict[str, str] | None = None, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run(CLI + list(args), cwd=REPO, env=env or _env(home), capture_output=True, text=True,
                          timeout=900)
    if check:
        assert proc.returncode == 0, f"{args}: {proc.stdout[-3000:]}{proc.stderr[-6000:]}"
    return proc


def _build(home: Path) -> dict:
    return json.loads(_cli(home, "build", "--sample", "--films", "20", "--json").stdout)


def _state(home: Path):
    return duckdb.connect(str(home / "state.duckdb"), read_only=True)


def _pick_targets(home: Path, manifest: dict) -> dict:
    cands: dict[tuple[str, str], list[dict]] = {}
    for c in manifest["candidates"]:
        if not (c["machine_translated"] or c["ai_translated"]):
            cands.setdefault((c["imdb_id"], c["language"]), []).append(c)
    with _state(home) as con:
        selected = con.execute(
            """SELECT s.imdb_id, s.language, s.track_id, s.file_id, c.rank FROM selections s
               JOIN film_gates g ON g.imdb_id = s.imdb_id AND g.dropped_at IS NULL
               JOIN candidates c ON c.imdb_id = s.imdb_id AND c.language = s.language AND c.file_id = s.file_id
               WHERE s.status = 'ok' ORDER BY 1, 2""").fetchall()
        flagged_sel = con.execute(
            "SELECT imdb_id, language, track_id, file_id FROM selections WHERE status = 'flagged' ORDER BY 1, 2"
        ).fetchall()
        flagged_other = con.execute(
            """SELECT t.imdb_id, t.language, t.track_id, t.file_id FROM tracks t
               JOIN selections s ON s.imdb_id = t.imdb_id AND s.language = t.language
               WHERE t.status = 'flagged' AND s.status = 'ok' ORDER BY 1, 2, 4""").fetchall()
    assert flagged_sel, "the sample world has a film-language whose only usable candidate is flagged"
    retain = dict(zip(("imdb_id", "language", "track_id", "file_id"), flagged_sel[0]))
    replace = None
    for imdb, lang, tid, fid, rank in selected:
        later = sorted((c for c in cands[(imdb, lang)] if c["rank"] > rank), key=lambda c: c["rank"])
        if imdb != retain["imdb_id"] and later and later[0]["expected_status"] == "ok":
            replace = {"imdb_id": imdb, "language": lang, "track_id": tid, "file_id": fid,
                       "expected_file_id": str(later[0]["file_id"])}
            break
    assert replace, "a selected track with a clean next candidate"
    exclude = next(dict(zip(("imdb_id", "language", "track_id", "file_id"), r[:4])) for r in selected
                   if r[0] not in (replace["imdb_id"], retain["imdb_id"]))
    repair = next(dict(zip(("imdb_id", "language", "track_id", "file_id"), r)) for r in flagged_other
                  if r[0] not in (replace["imdb_id"], retain["imdb_id"], exclude["imdb_id"]))
    return {"replace": replace, "exclude": exclude, "retain": retain, "repair": repair}


@pytest.fixture(scope="module")
def reviewed(tmp_path_factory):
    shared_home, first = sample20_build()  # the first build, shared: decisions go to a copy
    home = copy_home(shared_home, tmp_path_factory.mktemp("review") / "home")
    manifest = json.loads(next((home / "sample-world").glob("*/manifest.json")).read_text())
    t = _pick_targets(home, manifest)
    t0 = datetime.now(timezone.utc)
    _cli(home, "review", "decide", t["replace"]["track_id"][:10], "--action", "replace",
         "--note", "timing drifts two seconds after reel 3", "--by", "alice")
    _cli(home, "review", "decide", t["exclude"]["track_id"], "--action", "exclude",
         "--note", "subtitles of the theatrical cut; the release is the director's cut", "--by", "bob")
    _cli(home, "review", "decide", t["retain"]["track_id"][:12], "--action", "repair",
         "--note", "asked the uploader for a corrected file", "--by", "carol")
    _cli(home, "review", "decide", t["retain"]["track_id"][:12], "--action", "retain",
         "--note", "narration in English, dialogue usable", env=_env(home, USER="carol"))
    _cli(home, "review", "decide", t["repair"]["track_id"], "--action", "repair",
         "--note", "re-timing the gap by hand", "--by", "dave")
    with _state(home) as con:
        (link_kim,) = con.execute("SELECT kim_id FROM link_reviews WHERE decision IS NULL").fetchone()
        link_gate_before = con.execute("SELECT imdb_id, dropped_at, reason FROM film_gates WHERE kim_id = ?",
                                       [link_kim]).fetchone()
    link_out = json.loads(_cli(home, "review", "decide-link", link_kim, "--accept", "kim", "--note",
                               "same film: the CSM page links a namesake", "--by", "erin", "--json").stdout)
    link_list = json.loads(_cli(home, "review", "list", "--json").stdout)["link_reviews"]
    t1 = datetime.now(timezone.utc)
    second = _build(home)
    csv_path = home / "exports" / "decisions.csv"
    _cli(home, "review", "export", str(csv_path))
    with open(csv_path, newline="", encoding="utf-8") as fh:
        history = list(csv.DictReader(fh))
    return {"home": home, "first": first, "second": second, "targets": t, "t0": t0, "t1": t1,
            "history": history, "manifest": manifest,
            "link": {"kim_id": link_kim, "gate_before": link_gate_before, "decided": link_out,
                     "listed_before_build": link_list}}


def _release(summary: dict, name: str) -> pl.DataFrame:
    return pl.read_parquet(Path(summary["release"]["path"]) / f"{name}.parquet")


def _release_track(summary: dict, imdb_id: str, language: str) -> dict | None:
    rows = _release(summary, "tracks").filter((pl.col("imdb_id") == imdb_id) & (pl.col("language") == language))
    return rows.row(0, named=True) if rows.height else None


def test_next_build_publishes_a_new_release(reviewed):
    first, second = reviewed["first"], reviewed["second"]
    assert second["release"]["new"] is True
    assert second["release"]["version"] != first["release"]["version"]
    assert second["release"]["change"] == "major"  # a track replaced, a film removed


def test_replace_selects_the_next_candidate(reviewed):
    r = reviewed["targets"]["replace"]
    before = _release_track(reviewed["first"], r["imdb_id"], r["language"])
    after = _release_track(reviewed["second"], r["imdb_id"], r["language"])
    assert before["file_id"] == r["file_id"]
    assert after["file_id"] == r["expected_file_id"] != r["file_id"]
    assert after["status"] == "ok"
    with _state(reviewed["home"]) as con:
        sel = con.execute("SELECT file_id, status FROM selections WHERE imdb_id = ? AND language = ?",
                          [r["imdb_id"], r["language"]]).fetchone()
    assert sel == (r["expected_file_id"], "ok")


def test_exclude_leaves_the_film_language_missing(reviewed):
    x = reviewed["targets"]["exclude"]
    assert x["imdb_id"] in _release(reviewed["first"], "films")["imdb_id"].to_list()
    assert x["imdb_id"] not in _release(reviewed["second"], "films")["imdb_id"].to_list()
    with _state(reviewed["home"]) as con:
        sel = con.execute("SELECT track_id, status, reason FROM selections WHERE imdb_id = ? AND language = ?",
                          [x["imdb_id"], x["language"]]).fetchone()
        gate = con.execute("SELECT dropped_at, reason, detail FROM film_gates WHERE imdb_id = ?",
                           [x["imdb_id"]]).fetchone()
    assert sel == (None, "excluded", "curator_exclude")
    assert gate[0] == 5 and gate[1] == "language_missing" and f"{x['language']}:excluded" in gate[2]


def test_retain_resolves_the_flag_and_keeps_it_in_history(reviewed):
    k = reviewed["targets"]["retain"]
    assert k["imdb_id"] not in _release(reviewed["first"], "films")["imdb_id"].to_list()
    assert k["imdb_id"] in _release(reviewed["second"], "films")["imdb_id"].to_list()
    track = _release_track(reviewed["second"], k["imdb_id"], k["language"])
    assert track["track_id"] == k["track_id"] and track["status"] == "retained"
    flags = _release(reviewed["second"], "flags").filter(pl.col("track_id") == k["track_id"])
    assert flags.height >= 1  # the flag stays in the release's audit trail
    with _state(reviewed["home"]) as con:
        assert con.execute("SELECT status FROM tracks WHERE track_id = ?", [k["track_id"]]).fetchone()[0] == "flagged"
        assert con.execute("SELECT dropped_at FROM film_gates WHERE imdb_id = ?", [k["imdb_id"]]).fetchone()[0] is None


def test_repair_keeps_the_track_flagged(reviewed):
    p = reviewed["targets"]["repair"]
    with _state(reviewed["home"]) as con:
        status = con.execute("SELECT status FROM tracks WHERE track_id = ?", [p["track_id"]]).fetchone()[0]
        sel = con.execute("SELECT track_id, status FROM selections WHERE imdb_id = ? AND language = ?",
                          [p["imdb_id"], p["language"]]).fetchone()
    assert status == "flagged"
    assert sel[0] != p["track_id"] and sel[1] == "ok"


def test_history_says_who_when_and_why(reviewed):
    h = reviewed["history"]
    t = reviewed["targets"]
    assert [(r["action"], r["decided_by"], r["track_id"]) for r in h] == [
        ("replace", "alice", t["replace"]["track_id"]),
        ("exclude", "bob", t["exclude"]["track_id"]),
        ("repair", "carol", t["retain"]["track_id"]),
        ("retain", "carol", t["retain"]["track_id"]),  # --by defaulted to $USER
        ("repair", "dave", t["repair"]["track_id"]),
    ]
    assert h[0]["note"] == "timing drifts two seconds after reel 3"
    assert h[3]["note"] == "narration in English, dialogue usable"
    times = [datetime.fromisoformat(r["decided_at"]) for r in h]
    assert all(reviewed["t0"] <= x <= reviewed["t1"] for x in times)
    assert times == sorted(times)
    # the superseded repair stays in the history; every other decision is in force
    assert [r["in_force"] for r in h] == ["True", "True", "False", "True", "True"]
    # the current outcome of each film-language beside the decision
    assert (h[0]["selection_status"], h[0]["selected_file_id"], h[0]["track_selected"]) == (
        "ok", t["replace"]["expected_file_id"], "False")
    assert h[1]["selection_status"] == "excluded"
    assert (h[3]["selection_status"], h[3]["track_selected"]) == ("retained", "True")
    with _state(reviewed["home"]) as con:
        assert con.execute("SELECT count(*) FROM decisions").fetchone()[0] == 5


def test_list_and_show(reviewed):
    home, t = reviewed["home"], reviewed["targets"]
    listing = json.loads(_cli(home, "review", "list", "--json").stdout)
    with _state(home) as con:
        queue = {r[0] for r in con.execute(
            "SELECT track_id FROM tracks WHERE status <> 'ok' OR track_id IN (SELECT track_id FROM flags)").fetchall()}
        layers = [r[0] for r in con.execute("SELECT DISTINCT layer FROM flags ORDER BY 1").fetchall()]
    assert {r["track_id"] for r in listing["tracks"]} == queue
    row = next(r for r in listing["tracks"] if r["track_id"] == t["retain"]["track_id"])
    assert (row["selection_status"], row["selected"], row["decision"], row["decided_by"]) == (
        "retained", True, "retain", "carol")
    assert row["layers"] and row["file_id"] == t["retain"]["file_id"]
    [link] = listing["link_reviews"]  # decided: still listed, never re-opened by the rebuild
    assert (link["kim_id"], link["decision"], link["decided_by"], link["applied"]) == (
        reviewed["link"]["kim_id"], "accept_kim", "erin", True)
    for layer in layers:
        rows = json.loads(_cli(home, "review", "list", "--layer", layer, "--json").stdout)["tracks"]
        assert rows and all(layer in r["layers"] for r in rows)
    ro = json.loads(_cli(home, "review", "list", "--language", "ro", "--json").stdout)["tracks"]
    assert ro and {r["language"] for r in ro} == {"ro"}
    human = _cli(home, "review", "list").stdout
    assert t["retain"]["track_id"][:12] in human and "entity-link review queue" in human

    shown = json.loads(_cli(home, "review", "show", t["retain"]["track_id"][:8], "--json").stdout)
    assert shown["track"]["track_id"] == t["retain"]["track_id"]
    assert shown["flags"] and all(f["evidence"] is not None for f in shown["flags"])
    assert [c["rank"] for c in shown["chain"]] == sorted(c["rank"] for c in shown["chain"])
    assert [c["selected"] for c in shown["chain"] if c["track_id"] == t["retain"]["track_id"]] == [True]
    assert [(x["action"], x["decided_by"], x["in_force"]) for x in shown["history"]] == [
        ("repair", "carol", False), ("retain", "carol", True)]
    assert "narration in English" in _cli(home, "review", "show", t["retain"]["track_id"]).stdout


def test_report_of_the_second_build_shows_the_decisions(reviewed):
    page = Path(reviewed["second"]["report"]["path"]).read_text(encoding="utf-8")
    for note in ("timing drifts two seconds after reel 3", "re-timing the gap by hand"):
        assert note in page
    assert 'class="st-retained">retained' in page and 'class="st-excluded">excluded' in page


def test_bad_decisions_are_refused_and_nothing_is_written(reviewed):
    home, t = reviewed["home"], reviewed["targets"]
    with _state(home) as con:
        n = con.execute("SELECT count(*) FROM decisions").fetchone()[0]
        rejected = con.execute("SELECT track_id FROM tracks WHERE status = 'rejected' AND track_id NOT IN "
                               "(SELECT track_id FROM decisions) LIMIT 1").fetchone()[0]
        ids = [r[0] for r in con.execute("SELECT track_id FROM tracks").fetchall()]
    shared = next(p for p in "0123456789abcdef" if sum(i.startswith(p) for i in ids) > 1)
    tid = t["repair"]["track_id"]
    no_user = {k: v for k, v in _env(home).items() if k not in ("USER", "LOGNAME")}
    cases = [
        (("review", "decide", tid, "--action", "delete", "--note", "x", "--by", "e"), None, "delete"),
        (("review", "decide", tid, "--action", "retain", "--note", "  ", "--by", "e"), None, "--note"),
        (("review", "decide", "ffffffffffffzz", "--action", "retain", "--note", "x", "--by", "e"), None, "no track"),
        (("review", "decide", shared, "--action", "retain", "--note", "x", "--by", "e"), None, "ambiguous"),
        (("review", "decide", rejected, "--action", "retain", "--note", "x", "--by", "e"), None, "rejected"),
        (("review", "decide", tid, "--action", "retain", "--note", "x"), no_user, "--by"),
        (("review", "show", "ffffffffffffzz"), None, "no track"),
    ]
    for args, env, message in cases:
        proc = _cli(home, *args, env=env, check=False)
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        assert message in proc.stderr, (args, proc.stderr)
    with _state(home) as con:
        assert con.execute("SELECT count(*) FROM decisions").fetchone()[0] == n


def test_review_without_a_state_database(tmp_path):
    proc = _cli(tmp_path, "review", "list", env=_env(tmp_path / "nothing"), check=False)
    assert proc.returncode == 2 and "no state database" in proc.stderr


def test_link_decision_is_honoured_by_the_next_build(reviewed):
    """`review decide-link --accept kim` on the planted KIM/CSM disagreement: the film left at gate 3
    before; the next build resolves it to the KIM id, acquires it, and it passes gate 3 (here it
    reaches the cohort and the release)."""
    link, manifest = reviewed["link"], reviewed["manifest"]
    planted = next(f for f in manifest["films"] if f["kim_id"] == link["kim_id"])
    assert planted["expected_drop_reason"] == "csm_link_mismatch"
    imdb_id, dropped_at, reason = link["gate_before"]
    assert (imdb_id, dropped_at, reason) == (planted["imdb_id"], 3, "csm_link_disagrees")
    assert imdb_id not in _release(reviewed["first"], "films")["imdb_id"].to_list()
    # recorded at once, applied by the next build
    assert link["decided"]["decision"] == "accept_kim" and link["decided"]["previous"] == "open"
    [before] = [r for r in link["listed_before_build"] if r["kim_id"] == link["kim_id"]]
    assert (before["decision"], before["applied"]) == ("accept_kim", False)
    with _state(reviewed["home"]) as con:
        film = con.execute("SELECT imdb_id, link_status FROM films WHERE kim_id = ?", [link["kim_id"]]).fetchone()
        gate = con.execute("SELECT dropped_at, reason FROM film_gates WHERE kim_id = ?", [link["kim_id"]]).fetchone()
        queued = con.execute("SELECT kim_imdb_id, csm_imdb_id, decision, decided_by FROM link_reviews").fetchall()
        history = con.execute("SELECT kim_id, decision, decided_by, note, decided_at FROM link_decisions").fetchall()
        tracks = con.execute("SELECT count(*) FROM selections WHERE imdb_id = ? AND status = 'ok'",
                             [imdb_id]).fetchone()[0]
    assert film == (planted["imdb_id"], "accepted_kim")
    assert gate == (None, None)  # in the cohort now
    assert tracks == 6
    assert imdb_id in _release(reviewed["second"], "films")["imdb_id"].to_list()
    # the rebuild kept the one queue row, with the decision applied (not re-added as undecided)
    assert queued == [(planted["imdb_id"], planted["csm_imdb_link"].split("/title/")[1].split("/")[0],
                       "accept_kim", "erin")]
    [(kim_id, decision, by, note, at)] = history
    assert (kim_id, decision, by, note) == (link["kim_id"], "accept_kim", "erin",
                                            "same film: the CSM page links a namesake")
    assert reviewed["t0"] <= at <= reviewed["t1"]
    gate3 = next(g for g in reviewed["second"]["funnel"] if g["gate_no"] == 3)
    assert "csm_link_disagrees" not in (gate3.get("reasons") or {})
    page = Path(reviewed["second"]["report"]["path"]).read_text(encoding="utf-8")
    assert "same film: the CSM page links a namesake" in page


def test_bad_link_decisions_are_refused_and_nothing_is_written(reviewed):
    home, kim_id = reviewed["home"], reviewed["link"]["kim_id"]
    with _state(home) as con:
        n = con.execute("SELECT count(*) FROM link_decisions").fetchone()[0]
    no_user = {k: v for k, v in _env(home).items() if k not in ("USER", "LOGNAME")}
    cases = [
        (("review", "decide-link", "no-such-film-1999", "--accept", "kim", "--note", "x", "--by", "e"), None,
         "no entity-link review"),
        (("review", "decide-link", kim_id, "--accept", "kim", "--note", " ", "--by", "e"), None, "--note"),
        (("review", "decide-link", kim_id, "--accept", "both", "--note", "x", "--by", "e"), None, "both"),
        (("review", "decide-link", kim_id, "--accept", "reject", "--note", "x"), no_user, "--by"),
    ]
    for args, env, message in cases:
        proc = _cli(home, *args, env=env, check=False)
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        assert message in proc.stderr, (args, proc.stderr)
    with _state(home) as con:
        assert con.execute("SELECT count(*) FROM link_decisions").fetchone()[0] == n
