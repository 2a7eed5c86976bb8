"""End to end (issue 14 point 6): a live build (`cinesub build --config`, the real CLI and Prefect
flow) over a sample world's pages and a local subtitle dump with planted bad entries. Each bad
entry is a recorded refusal of that entry only — the films around it keep their tracks, the build
publishes — and nothing (a FIFO!) blocks it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from _cli_runner import cli_env

from cinesub.sample.generate import generate

REPO = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-m", "cinesub.cli"]

pytestmark = pytest.mark.slow


def _plant(world: Path, subs: Path) -> dict[str, str]:
    """Copy the world's subtitles to ``subs`` and plant one bad entry of each kind in slots of
    films that make the cohort; returns the slots' films."""
    shutil.copytree(world / "subtitles", subs, symlinks=True)
    manifest = json.loads((world / "manifest.json").read_text())
    kept = [f["true_imdb_id"] for f in manifest["films"] if f["expected_drop_gate"] is None]
    missing_lang = next(f["true_imdb_id"] for f in manifest["films"]
                        if f["expected_drop_reason"] == "language_missing")
    a, b = kept[0], kept[1]
    ro = subs / a / "ro"
    good = sorted(ro.glob("*.srt"))[0].read_bytes()
    (ro / "999.srt").write_bytes(good)
    (ro / "999.json").write_bytes(b"\x00garbage{")                # a garbage sidecar
    en = subs / b / "en"
    os.mkfifo(en / "fifo.srt")                                     # would block a reader
    (en / "gone.srt").symlink_to(en / "nowhere")                   # dangling
    (en / os.fsdecode(b"caf\xe9.srt")).write_bytes(good)            # name not UTF-8
    langs = sorted(p.name for p in (subs / missing_lang).iterdir())
    absent = next(lang for lang in ("en", "ar", "id", "fa", "ro", "vi") if lang not in langs)
    (subs / missing_lang / absent).write_text("not a folder")      # a language folder that is a file
    return {"sidecar": a, "special": b, "folder": missing_lang, "folder_lang": absent}


def test_bad_entries_of_a_local_dump_are_refusals_and_the_build_publishes(tmp_path):
    world = tmp_path / "world"
    generate(world, seed=7, n_films=17)
    subs = tmp_path / "subs"
    films = _plant(world, subs)
    cfg = tmp_path / "cinesub.toml"
    cfg.write_text(f'[inputs]\nsources_dir = "{world}"\nsubtitles_dir = "{subs}"\n')
    home = tmp_path / "home"
    proc = subprocess.run(CLI + ["build", "--config", str(cfg), "--json"], cwd=REPO, env=cli_env(home),
                          capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-6000:]
    summary = json.loads(proc.stdout)
    assert summary["status"] == "completed" and summary["release"]["new"]
    assert summary["work"]["refused_at_search"] == 5
    # the manifest records the input snapshot: the digest of the source pages (it was always null)
    from flows.env import dir_digest

    manifest = json.loads((Path(summary["release"]["path"]) / "manifest.json").read_text())
    assert manifest["inputs"]["sources"] == dir_digest(world) and manifest["inputs"]["sample_world"] is None

    con = duckdb.connect(str(home / "state.duckdb"), read_only=True)
    refused = {(tt, lang, fid): reason.split(":")[0] for tt, lang, fid, reason in con.execute(
        "SELECT imdb_id, language, file_id, reason FROM attempts WHERE outcome = 'search_rejected'").fetchall()}
    assert refused == {
        (films["sidecar"], "ro", "999"): "bad_sidecar",
        (films["special"], "en", "fifo"): "not_a_file",
        (films["special"], "en", "gone"): "dangling_link",
        (films["special"], "en", "caf\\xe9"): "bad_file_name",
        (films["folder"], films["folder_lang"], "-"): "not_a_directory",
    }
    # nothing else failed: no search failure, no stage left incomplete
    assert con.execute("SELECT count(*) FROM attempts WHERE outcome = 'search_failed'").fetchone() == (0,)
    # the slots beside the bad entries keep every valid candidate and a selected track (before,
    # the garbage sidecar failed the whole search of its slot: no candidates, the film out at gate 5)
    for tt, lang in ((films["sidecar"], "ro"), (films["special"], "en")):
        want = sorted(q.stem for q in (world / "subtitles" / tt / lang).glob("*.srt"))
        got = sorted(r[0] for r in con.execute(
            "SELECT file_id FROM candidates WHERE imdb_id = ? AND language = ?", [tt, lang]).fetchall())
        assert got == want, (tt, lang)
        track, status = con.execute("SELECT track_id, status FROM selections WHERE imdb_id = ? AND language = ?",
                                    [tt, lang]).fetchone()
        assert track is not None and status in ("ok", "flagged"), (tt, lang, status)
    reason, detail = con.execute("SELECT reason, detail FROM film_gates WHERE imdb_id = ?",
                                 [films["folder"]]).fetchone()
    assert reason == "language_missing" and f"{films['folder_lang']}:missing" in detail  # its folder is a file
