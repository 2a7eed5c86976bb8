"""The pipeline kernel (flows/kernel*.py): stage contracts, per-stage statistics, the typed run
context, the environments, and `cinesub run list|show`."""

from __future__ import annotations

import dataclasses
import json

import pytest
from typer.testing import CliRunner

from cinesub.cli import app
from cinesub.errors import ExitCode
from cinesub.settings import load_settings
from cinesub.state import connect
from flows.env import dir_digest, environment
from flows.env.live import LiveEnvironment
from flows.env.sample import SampleEnvironment
from flows.kernel_context import RunContext, Stage
from flows.kernel_exec import CONTRACTS_ENV, ContractViolation, execute, stage_stats_rows, tables_named


class _Honest(Stage):
    name = "honest"
    reads = ("films",)
    writes = ("funnel",)

    def run(self, ctx, con):
        n = con.execute("SELECT count(*) FROM films").fetchone()[0]
        con.execute("DELETE FROM funnel")
        con.execute("INSERT INTO funnel VALUES (1, 'inventory', ?, 0, NULL)", [n])
        return {"n": n}

    def items_in_out(self, stats):
        return stats["n"], stats["n"], {"none": 0, "planted": 2}


class _WritesUndeclared(_Honest):
    name = "lying-writer"

    def run(self, ctx, con):
        con.execute("INSERT INTO films (kim_id, imdb_id_status, link_status) VALUES ('k9', 'ok', 'agree')")
        return {"n": 1}


class _ReadsUndeclared(_Honest):
    name = "lying-reader"

    def run(self, ctx, con):
        con.execute("CREATE OR REPLACE TEMP VIEW v AS SELECT * FROM tracks")  # through a view it creates
        return {"n": con.execute("SELECT count(*) FROM v").fetchone()[0]}


def _ctx(tmp_path, run_id="r1"):
    return RunContext(settings=load_settings(home=tmp_path), run_id=run_id)


def test_the_suite_runs_with_contract_checks_on():
    import os

    assert os.environ.get(CONTRACTS_ENV) == "1"


def test_a_stage_that_writes_an_undeclared_table_fails(tmp_path):
    with pytest.raises(ContractViolation, match=r"lying-writer wrote films"):
        execute(_WritesUndeclared(), _ctx(tmp_path))
    with connect(load_settings(home=tmp_path).state_db) as con:
        assert con.execute("SELECT status FROM stage_runs WHERE stage = 'lying-writer'").fetchone() == ("failed",)


def test_a_stage_that_reads_an_undeclared_table_fails(tmp_path):
    with pytest.raises(ContractViolation, match=r"lying-reader read tracks"):
        execute(_ReadsUndeclared(), _ctx(tmp_path))


def test_an_honest_stage_passes_and_its_stats_are_normalised(tmp_path):
    stats = execute(_Honest(), _ctx(tmp_path))
    assert stats["items_in"] == 0 and stats["items_out"] == 0 and stats["dropped"] == {"planted": 2}
    assert stats["seconds"] >= 0 and stats["reused"] is False
    again = execute(_Honest(), _ctx(tmp_path, "r2"))
    assert again["reused"] is True and again["dropped"] == {"planted": 2}
    with connect(load_settings(home=tmp_path).state_db) as con:
        rows = stage_stats_rows(con, "r2")
    assert rows == [{"flow": "build-cinesub", "stage": "honest", "status": "reused", "reused": True, "items_in": 0,
                     "items_out": 0, "dropped": {"planted": 2}, "seconds": again["seconds"]}]


class _ReadsFunnel(_Honest):
    """Reads what _Honest writes: its fingerprint depends on _Honest's output."""

    name = "funnel-reader"
    reads = ("funnel", "films")
    writes = ("flags",)

    def run(self, ctx, con):
        return {"n": con.execute("SELECT count(*) FROM funnel").fetchone()[0]}


def test_table_digests_are_taken_once_between_two_stage_runs(tmp_path, monkeypatch):
    """A stage's fingerprint reuses the digests the previous stage's fingerprint took after its
    run (nothing writes between two stages); a stage run forgets them all, so a table it wrote
    is digested again — and a later build sees the change."""
    import flows.kernel_context as kc

    taken = []
    real = kc.table_digest
    monkeypatch.setattr(kc, "table_digest", lambda con, t: taken.append(t) or real(con, t))
    ctx = _ctx(tmp_path)
    execute(_Honest(), ctx)
    assert taken == ["films", "films"]  # before its run, and after it
    taken.clear()
    execute(_ReadsFunnel(), ctx)
    assert taken == ["funnel", "funnel", "films"]  # films from _Honest's after-run digest
    taken.clear()
    assert execute(_ReadsFunnel(), _ctx(tmp_path, "r2"))["reused"] is True
    with connect(load_settings(home=tmp_path).state_db) as con:
        con.execute("INSERT INTO funnel VALUES (2, 'survey', 1, 0, NULL)")  # the state changed between builds
    assert execute(_ReadsFunnel(), _ctx(tmp_path, "r3"))["reused"] is False


def test_table_names_are_matched_on_word_boundaries_outside_comments_and_literals():
    tables = ["films", "tracks", "flags", "entries"]
    sql = """-- reads tracks
             SELECT e.n_entries, 'flags' AS label FROM eligible_films e JOIN "films" f USING (kim_id)"""
    assert tables_named(sql, tables) == {"films"}


def test_the_run_context_is_typed_and_has_no_extra(tmp_path):
    ctx = _ctx(tmp_path)
    names = {f.name for f in dataclasses.fields(ctx)}
    assert "extra" not in names and {"settings", "run_id", "flow", "env", "items", "gemini"} <= names
    assert isinstance(ctx.env, LiveEnvironment) and ctx.primary_extractor == "ocr-rules"


def test_sample_or_live_is_one_decision(tmp_path):
    from cinesub.errors import UsageError

    s = load_settings(home=tmp_path)
    assert isinstance(environment(s, True, faults="quota"), SampleEnvironment)
    assert isinstance(environment(s, False), LiveEnvironment)
    with pytest.raises(UsageError, match="sample-build option"):
        environment(s, False, faults="quota")
    with pytest.raises(UsageError) as exc:
        environment(s, True, faults="no-such-fault")
    assert exc.value.reason == "bad_faults"


def test_live_release_inputs_record_the_digest_of_the_source_pages(tmp_path):
    pages = tmp_path / "pages"
    (pages / "kim").mkdir(parents=True)
    (pages / "kim" / "a.html").write_text("<html>a</html>")
    s = load_settings(home=tmp_path / "home")
    s.inputs.sources_dir = pages
    inputs = LiveEnvironment(s).release_inputs()
    # a folder filled by hand has no crawl snapshot
    assert inputs == {"sample_world": None, "sources": dir_digest(pages), "sources_snapshot": None}
    assert inputs["sources"]
    (pages / "kim" / "a.html").write_text("<html>b</html>")
    assert LiveEnvironment(s).release_inputs()["sources"] != inputs["sources"]


def _recorded_run(tmp_path):
    s = load_settings(home=tmp_path)
    ctx = RunContext(settings=s, run_id="20260101T000000-abcdef")
    with connect(s.state_db) as con:
        con.execute("INSERT INTO runs (run_id, started_at, status, sample, config_hash, code_version) "
                    "VALUES (?, now(), 'completed', true, 'h', 'v')", [ctx.run_id])
    execute(_Honest(), ctx)
    return ctx.run_id


def test_run_show_lists_the_stages_of_a_run(tmp_path):
    run_id = _recorded_run(tmp_path)
    runner = CliRunner()
    out = runner.invoke(app, ["run", "show", run_id, "--home", str(tmp_path), "--json"])
    assert out.exit_code == 0, out.output
    shown = json.loads(out.output)
    assert shown["flow"] == "build-cinesub" and shown["status"] == "completed"
    assert [(r["stage"], r["items_in"], r["dropped"]) for r in shown["stages"]] == [("honest", 0, {"planted": 2})]
    table = runner.invoke(app, ["run", "show", run_id, "--home", str(tmp_path)])
    assert table.exit_code == 0 and "honest" in table.output and "planted 2" in table.output
    listed = runner.invoke(app, ["run", "list", "--home", str(tmp_path), "--json"])
    assert [r["run_id"] for r in json.loads(listed.output)] == [run_id]


def test_run_show_of_an_unknown_run_is_one_line_and_exit_2(tmp_path):
    _recorded_run(tmp_path)
    out = CliRunner().invoke(app, ["run", "show", "nope", "--home", str(tmp_path)])
    assert out.exit_code == ExitCode.USAGE
    assert "no run 'nope'" in out.output and "Traceback" not in out.output
