"""`cinesub hollywood plan` covers the CCE registration and renewal volumes too (issue 17, point
4): the cce-discover search (``extractors.ia.CCE_QUERY``) against the sample world's IA fixture,
metadata only — volumes, pages, image-only pages, the Gemini requests/tokens/cost of the CCE page
task and a grand total; ``--no-cce`` leaves the CCE part out. The Gemini fixture beside it gets no
request and no file is downloaded."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cinesub.cli_hollywood import format_plan, hollywood_plan
from cinesub.sample.cce import generate_cce_world
from cinesub.sample.variety import generate_variety_world
from cinesub.settings import host_to_url, load_settings
from extractors.cce.gemini_pages import TASK as CCE_TASK
from extractors.gemini_pages import IMAGE_TOKENS, task_text_tokens
from extractors.ia import CCE_QUERY
from fixtures.gemini_pages_server import GeminiPagesFixture
from fixtures.ia_server import IAFixture
from flows.env.sample import SampleEnvironment

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def worlds(tmp_path_factory):
    root = tmp_path_factory.mktemp("plan-cce-worlds")
    return ({"variety": root / "variety", "cce": root / "cce"},
            generate_variety_world(root / "variety", seed=1934), generate_cce_world(root / "cce", seed=1934))


def _plan(dirs, home, years=(1922, 1979), cce=True, gemini_dirs=None):
    settings = load_settings(None, home)
    gdirs = gemini_dirs or dirs  # the Gemini fixture loads a world's page images (an intact copy)
    with IAFixture(dirs["variety"], dirs["cce"]) as ia, GeminiPagesFixture(gdirs["variety"], gdirs["cce"]) as gem:
        env = SampleEnvironment.attached(settings, worlds=dict(dirs),
                                         endpoints={"internet_archive": host_to_url(ia.host), "gemini": gem.base_url})
        res = hollywood_plan(settings, env, years, cce=cce)
        assert gem.requests == [] and gem.count("generate") == 0  # nothing is spent
        assert ia.count("download") == 0  # search and metadata only
        return res


def test_plan_counts_the_cce_volumes_and_a_grand_total(worlds, tmp_path):
    dirs, _, cman = worlds
    res = _plan(dirs, tmp_path / "home")
    c = res["cce"]
    assert c["query"] == CCE_QUERY
    assert c["volumes"] == c["volumes_read"] == len(cman["volumes"]) == 8
    assert c["pages"] == sum(len(v["pages"]) for v in cman["volumes"])
    image_only = sum(len(v["pages"]) for v in cman["volumes"] if not v["text_layer"])
    assert image_only == 2 and c["image_only_pages"] == image_only
    assert c["text_layer_pages"] == c["pages"] - image_only
    assert {r["item_id"] for r in c["per_item"] if r["text_layer"] is None} == \
        {v["identifier"] for v in cman["volumes"] if not v["text_layer"]}
    assert c["item_reasons"] == {} and c["page_count_sources"] == {"page-count": 8}
    # cce-parse reads every page image with the CCE task (two worked examples + the page)
    g = c["gemini"]
    per_in = IMAGE_TOKENS["ultra_high"] * 3 + task_text_tokens(CCE_TASK)
    assert c["gemini_pages"] == g["requests"] == c["pages"]
    assert g["input_tokens"] == c["pages"] * per_in and g["worked_examples"] == 2
    assert g["cost_usd"]["total"] == pytest.approx((g["input_tokens"] * 2.0 + g["output_tokens"] * 12.0) / 1e6,
                                                   abs=0.011)
    t, v = res["total"], res["gemini"]
    assert t["requests"] == v["requests"] + g["requests"] and t["pages"] == res["pages"] + c["pages"]
    assert t["input_tokens"] == v["input_tokens"] + g["input_tokens"]
    assert t["cost_usd"]["total"] == pytest.approx(v["cost_usd"]["total"] + g["cost_usd"]["total"], abs=0.011)
    assert t["ia_requests"] == res["ia_requests"] + c["ia_requests"]
    text = format_plan(res)
    assert "CCE registration and renewal volumes" in text and f"volumes: {c['volumes']}" in text
    assert f"{image_only} image-only" in text and f"{t['requests']:,} Gemini requests" in text
    assert f"cost estimate ${t['cost_usd']['total']:,.2f}" in text


def test_cce_volumes_are_not_limited_by_the_variety_years(worlds, tmp_path):
    dirs, _, cman = worlds
    none = _plan(dirs, tmp_path / "home", years=(1950, 1960))
    assert none["items"] == 0 and none["cce"]["volumes"] == len(cman["volumes"])
    assert none["total"]["requests"] == none["cce"]["gemini"]["requests"]


def test_no_cce_keeps_the_variety_only_shape(worlds, tmp_path):
    dirs, _, _ = worlds
    res = _plan(dirs, tmp_path / "home", cce=False)
    assert res["cce"] is None and res["total"]["requests"] == res["gemini"]["requests"]
    assert res["total"]["pages"] == res["pages"]
    assert "CCE" not in format_plan(res)


def test_volumes_the_stage_cannot_read_are_refused_with_their_reason(worlds, tmp_path):
    """A `_djvu.txt` only (no page separator) is refused by cce-discover as ``no_page_index``, a
    volume with neither text layer nor images as ``no_text_layer``; a volume without a page count
    is estimated at the mean of the others."""
    dirs, _, cman = worlds
    cce = tmp_path / "cce"
    shutil.copytree(dirs["cce"], cce)
    vols = [v["identifier"] for v in cman["volumes"] if v["text_layer"]]
    txt_only, empty, uncounted = vols[0], vols[1], vols[2]
    for ident in (txt_only, empty):
        for f in (cce / "ia" / ident).iterdir():
            if f.name != "_item.json":
                f.unlink()
    (cce / "ia" / txt_only / f"{txt_only}_djvu.txt").write_text("MOTION PICTURES\n", encoding="utf-8")
    meta_path = cce / "ia" / uncounted / "_item.json"
    meta = json.loads(meta_path.read_text())
    del meta["page-count"]
    meta_path.write_text(json.dumps(meta))
    c = _plan({"variety": dirs["variety"], "cce": cce}, tmp_path / "home", gemini_dirs=dirs)["cce"]
    by = {r["item_id"]: r for r in c["per_item"]}
    assert by[txt_only]["reason"] == "no_page_index" and by[empty]["reason"] == "no_text_layer"
    assert by[uncounted]["reason"] == "no_page_count" and c["pages_estimated_items"] == 1
    assert c["item_reasons"] == {"no_page_index": 1, "no_text_layer": 1, "no_page_count": 1}
    assert c["volumes"] == 8 and c["volumes_read"] == 6
    assert c["pages"] == 6 * 2 and c["gemini"]["requests"] == 12  # every sample volume has two leaves
    assert "volumes refused: no_page_count 1, no_page_index 1, no_text_layer 1" in format_plan(
        {**_plan(dirs, tmp_path / "home"), "cce": c})


def test_cli_no_cce_option_on_the_sample(tmp_path):
    env = dict(os.environ, CINESUB_HOME=str(tmp_path / "home"))
    for flag, has_cce in (("--cce", True), ("--no-cce", False)):
        proc = subprocess.run([sys.executable, "-m", "cinesub.cli", "hollywood", "plan", "--years", "1934",
                               "--sample", flag, "--json"], cwd=REPO, env=env, capture_output=True, text=True,
                              timeout=300)
        assert proc.returncode == 0, proc.stderr[-2000:]
        res = json.loads(proc.stdout)
        assert (res["cce"] is not None) is has_cce and "total" in res and res["items"] == 1
        if has_cce:
            assert res["cce"]["volumes"] == 8 and res["total"]["requests"] > res["gemini"]["requests"]
