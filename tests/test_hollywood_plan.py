"""`cinesub hollywood plan` (issue 17, point 4): items, pages, kept pages, requests, tokens and a
cost estimate against the sample world's IA fixture, from IA search and metadata only — the
Gemini fixture running beside it gets no request."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from cinesub.cli_hollywood import hollywood_plan, item_page_count, measured_keep_rate, parse_years
from cinesub.errors import UsageError
from cinesub.sample.variety import generate_variety_world
from cinesub.settings import load_settings, host_to_url
from extractors.gemini_pages import IMAGE_TOKENS, task_text_tokens
from extractors.variety.gemini_pages import TASK
from fixtures.gemini_pages_server import GeminiPagesFixture
from fixtures.ia_server import IAFixture
from flows.env.sample import SampleEnvironment
from flows.stages.hollywood.common import pd_state_db

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("plan-world")
    return root, generate_variety_world(root, seed=1934)


def _plan(world, home, years, **settings_env):
    settings = load_settings(None, home)
    if settings_env:
        settings = settings.model_copy(update={"hollywood": settings.hollywood.model_copy(update=settings_env)})
    with IAFixture(world[0]) as ia, GeminiPagesFixture(world[0]) as gem:
        env = SampleEnvironment.attached(settings, worlds={"variety": world[0]},
                                         endpoints={"internet_archive": host_to_url(ia.host), "gemini": gem.base_url})
        res = hollywood_plan(settings, env, years)
        return res, gem, ia


def test_plan_counts_items_pages_and_cost_without_calling_gemini(world, tmp_path):
    root, manifest = world
    res, gem, ia = _plan(world, tmp_path / "home", (1922, 1979))
    assert gem.requests == [] and gem.count("generate") == 0 and res["gemini_called"] is False
    assert ia.count("download") == 0  # search and metadata only: no file is fetched
    assert res["items"] == len(manifest["items"])
    assert res["pages"] == sum(len(i["pages"]) for i in manifest["items"])
    assert res["page_count_sources"] == {"page-count": len(manifest["items"])}
    assert res["keep_rate_source"] == "setting hollywood.plan_keep_rate" and res["keep_rate"] == 0.03
    assert res["kept_pages"] == round(res["pages"] * 0.03)
    g = res["gemini"]
    per_in = IMAGE_TOKENS["ultra_high"] * 3 + task_text_tokens(TASK)  # two worked examples + the page
    assert g["requests"] == res["kept_pages"] and g["input_tokens"] == res["kept_pages"] * per_in
    assert g["cost_usd"]["total"] == pytest.approx(
        (g["input_tokens"] * 2.0 + g["output_tokens"] * 12.0) / 1e6, abs=0.011)
    assert "pricing" in g["prices"]["source"]


def test_plan_years_select_items_and_batch_halves_the_price(world, tmp_path):
    one, _, _ = _plan(world, tmp_path / "home", (1934, 1934), plan_keep_rate=0.5)
    assert one["items"] == 1 and one["pages"] == 13 and one["kept_pages"] == 6
    batch, _, _ = _plan(world, tmp_path / "home", (1934, 1934), plan_keep_rate=0.5, gemini_batch=True)
    assert batch["gemini"]["cost_usd"]["total"] == pytest.approx(one["gemini"]["cost_usd"]["total"] / 2, abs=0.011)
    none, _, _ = _plan(world, tmp_path / "home", (1950, 1960))
    assert none["items"] == 0 and none["pages"] == 0 and none["gemini"]["cost_usd"]["total"] == 0


def test_plan_uses_the_measured_keep_rate_of_the_last_build(tmp_path):
    settings = load_settings(None, tmp_path / "home")
    db = pd_state_db(settings)
    db.parent.mkdir(parents=True, exist_ok=True)
    with duckdb.connect(str(db)) as con:
        con.execute("CREATE TABLE pd_page_filter AS SELECT i AS page, i % 4 = 0 AS keep FROM range(40) t(i)")
    rate, source, n = measured_keep_rate(settings)
    assert (rate, n) == (0.25, 40) and source.startswith("measured")


def test_page_count_sources():
    assert item_page_count({"page-count": "335"}, []) == (335, "page-count")
    assert item_page_count({"imagecount": "524"}, [{"name": "X_jp2.zip", "filecount": "49"}]) == (49, "jp2_filecount")
    assert item_page_count({"imagecount": "524"}, []) == (524, "imagecount")
    assert item_page_count({}, [{"name": "X_djvu.txt"}]) == (None, "none")


def test_bad_years_are_one_error_line_and_exit_2(tmp_path):
    assert parse_years("1922-1979") == (1922, 1979) and parse_years(" 1934 ") == (1934, 1934)
    for bad in ("1979-1922", "19x2", "1922-", "1800-1850"):
        with pytest.raises(UsageError):
            parse_years(bad)
    env = dict(os.environ, CINESUB_HOME=str(tmp_path / "home"))
    proc = subprocess.run([sys.executable, "-m", "cinesub.cli", "hollywood", "plan", "--years", "1979-1922"],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and "first year is after the last" in lines[0]


def test_plan_json_on_the_sample(world, tmp_path):
    res, _, _ = _plan(world, tmp_path / "home", (1926, 1926))
    out = json.loads(json.dumps(res, default=str))
    assert [i["item_id"] for i in out["per_item"]] == ["variety83-1926-06"] and out["per_item"][0]["pages"] == 5
