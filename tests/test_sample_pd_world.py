"""Synthetic public-domain worlds (cinesub/sample/variety.py, cinesub/sample/cce.py): deterministic
(same seed → same bytes), internally consistent (gold tuples appear in the printed page text,
planted OCR noise in the djvu text), the planted cases present, and the collection non-empty."""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from cinesub.sample.cce import IMAGE_ONLY_VOLUME, REGS, RENS, expected_collection, generate_cce_world
from cinesub.sample.variety import FILMS, generate_variety_world, load_gold, money


def _tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def vworld(tmp_path_factory):
    root = tmp_path_factory.mktemp("v")
    return root, generate_variety_world(root, seed=1934)


@pytest.fixture(scope="module")
def cworld(tmp_path_factory):
    root = tmp_path_factory.mktemp("c")
    return root, generate_cce_world(root, seed=1934)


def test_variety_world_is_deterministic(vworld, tmp_path):
    root, manifest = vworld
    again = generate_variety_world(tmp_path / "again", seed=1934)
    assert _tree(root) == _tree(tmp_path / "again") and again == manifest
    generate_variety_world(tmp_path / "other", seed=7)
    assert load_gold(tmp_path / "other") != load_gold(root)  # the seed drives the grosses


def test_cce_world_is_deterministic(cworld, tmp_path):
    root, manifest = cworld
    assert generate_cce_world(tmp_path / "again", seed=1934) == manifest
    assert _tree(root) == _tree(tmp_path / "again")


def _entry_lines(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if "—" in ln]


def test_gold_tuples_appear_in_the_page_text(vworld):
    root, manifest = vworld
    gold = load_gold(root)
    n = 0
    for (item, page), g in gold.items():
        text = g["text"]
        for t in g["tuples"]:
            n += 1
            theater = t["theater"]
            head = f"SHOWCASE ({theater.split(':')[1]} houses)" if theater.startswith("SHOWCASE:") else theater + " ("
            lines = [ln for ln in _entry_lines(text) if ln.startswith(head) and f'"{t["movie"]}"' in ln]
            assert lines, (item, page, t)
            if t["gross"] is not None:
                assert any(money(t["gross"]) in ln for ln in lines), (item, page, t)
            if t["city"] == "New York":
                assert "\nBroadway\n" in text
            else:
                assert re.search(rf"^{re.escape(t['city'])}, [A-Z][a-z]+\.? \d+\.$", text, re.M), t
    assert n == sum(p["gold_tuples"] for i in manifest["items"] for p in i["pages"]) > 60


def test_planted_page_kinds_and_rules(vworld):
    root, manifest = vworld
    gold = load_gold(root)
    kinds = Counter(g["kind"] for g in gold.values())
    assert kinds["grosses"] == 5 and kinds["broadway"] == 2 and kinds["legitimate"] == 3 and kinds["colophon"] == 2
    for g in gold.values():
        if g["kind"] in ("legitimate", "vaudeville", "news", "colophon"):
            assert g["tuples"] == []
    legit = [g for g in gold.values() if g["kind"] == "legitimate"]
    assert all("Estimates for Last Week" in g["text"] and g["text"].startswith("LEGITIMATE") for g in legit)
    tuples = [t for g in gold.values() for t in g["tuples"]]
    assert any(t["theater"] == "SHOWCASE:5" for t in tuples)
    assert {t["week"] for t in tuples} == {"this week", "last week", "next week"}
    assert all(t["gross"] is None for t in tuples if t["week"] == "next week")
    shared = Counter((g["item_id"], g["page"], t["theater"], t["city"], t["week"], t["gross"])
                     for g in gold.values() for t in g["tuples"])
    assert any(c >= 2 for c in shared.values())  # one gross reported for two films at one theater
    assert {t["city"] for t in tuples} >= {"New York", "Chicago", "Los Angeles", "Montreal"}
    assert manifest["aliases"]["1934"]["counts"]["Gone"] >= 3
    assert manifest["aliases"]["1934"]["map"]["Gone"] == "tt9100001"


def test_ocr_noise_is_planted_in_the_djvu_text(vworld):
    root, manifest = vworld
    kinds = {n["noisy"] for n in manifest["ocr_noise"]}
    assert {"listimates for This Week", "Estimates for Thls^eck", "PICTDRE GROSSES"} <= kinds
    assert any("Q" in n["noisy"] for n in manifest["ocr_noise"])
    assert any(n["noisy"].startswith("S") and n["clean"].startswith("$") for n in manifest["ocr_noise"])
    for item in manifest["items"]:
        ident = item["identifier"]
        pages = _hocr_pages(root / "ia" / ident, ident)
        assert len(pages) == len(item["pages"])
        for n in manifest["ocr_noise"]:
            if n["item_id"] == ident:
                assert n["noisy"] in pages[n["page"]]
    headline = load_gold(root)[("variety114-1934-03", 2)]["text"].splitlines()[1]
    assert re.search(r"\d+G$", headline)  # "G" for thousands in headlines


def test_catalog_and_film_items(vworld):
    root, manifest = vworld
    rows = [ln.split("\t") for ln in (root / "catalog.tsv").read_text(encoding="utf-8").splitlines()]
    assert rows[0] == ["imdb", "title", "year", "votes"]
    ids = {r[0] for r in rows[1:]}
    assert {f.imdb for f in FILMS} <= ids and len(ids) > len(FILMS)
    titles = Counter(r[1] for r in rows[1:])
    assert titles["Gone with the Tempest"] == 2  # a namesake of another year
    for f in FILMS:
        item = root / "ia" / (f.ia_identifier or "-") / "_item.json"
        assert item.exists() == bool(f.ia_identifier)
        if f.ia_identifier:
            meta = json.loads(item.read_text())
            assert meta["mediatype"] == "movies"
            # a film item without sound metadata (Jazz Cavalcade): the collection cannot tell
            assert meta.get("sound") == (("sound" if f.sound else "silent") if f.sound_metadata else None)
    assert [f.key for f in FILMS if not f.sound_metadata] == ["cavalcade"]


_REG = re.compile(r"^[A-Z0-9 ,'.:-]+\. \d+ reels\. © [^;]+; \d{1,2}[A-Z][a-z]{2}\d{2}; [A-Z]+[0-9O]+\.$")
_REN_1950 = re.compile(r"^.+, a photoplay in \w+ reels by .+\. © \d{1,2}[A-Z][a-z]{2}\d{2}, L\d+\. R\d+, "
                       r"\d{1,2}[A-Z][a-z]{2}\d{2}, .+ \([A-Z]+\)$")
_REN_1954 = re.compile(r"^.+, a photoplay in \w+ reels by .+\. [©@6] \S+; \S+\. .+ \([A-Z]+\); "
                       r"\d{1,2}[A-Z][a-z]{2}\d{2}; R\d+\.$")


def test_cce_pages_use_the_printed_layouts(cworld):
    root, manifest = cworld
    seen = Counter()
    for gp in sorted((root / "gold").glob("*/*.json")):
        g = json.loads(gp.read_text())
        lines = [ln for ln in g["text"].splitlines() if "reels" in ln]
        for ln in lines:
            pattern = {"registration": _REG, "1950": _REN_1950, "1954": _REN_1954}[g["layout"]]
            assert pattern.match(ln), ln
            seen[g["layout"]] += 1
        djvu_path = root / "ia" / g["item_id"] / f"{g['item_id']}_djvu.txt"
        if g["item_id"] == IMAGE_ONLY_VOLUME:  # no text layer: the lines are in its page images only
            assert not djvu_path.exists()
            continue
        djvu = _hocr_pages(djvu_path.parent, g["item_id"])[g["page"]]
        assert all(ln in djvu for ln in lines)
    assert seen["registration"] == len(REGS) and seen["1950"] == 1 and seen["1954"] == len(RENS) - 2
    text = "\n".join(json.loads(p.read_text())["text"] for p in (root / "gold").glob("*/*.json"))
    assert "1P4412" in text and "220ct34" in text and "R2850141" in text and "LP46O1" in text and "@ 10Jan34" in text


def test_one_cce_volume_is_image_only_with_planted_cases(cworld):
    """The 1960-1969 cumulative volume has no text layer: a PDF of page images only, no _djvu.txt;
    its two planted cases (the 1963/1964 boundary) can be read from the images alone."""
    root, manifest = cworld
    layers = {v["identifier"]: v["text_layer"] for v in manifest["volumes"]}
    assert [i for i, has in layers.items() if not has] == [IMAGE_ONLY_VOLUME]
    for ident, has in layers.items():
        files = {p.name for p in (root / "ia" / ident).iterdir()}
        assert f"{ident}.pdf" in files and (f"{ident}_djvu.txt" in files) == has, ident
    pdf = (root / "ia" / IMAGE_ONLY_VOLUME / f"{IMAGE_ONLY_VOLUME}.pdf").read_bytes()
    assert b"/Font" not in pdf and b"HARBOR" not in pdf  # images, no text objects
    gold = json.loads((root / "gold" / IMAGE_ONLY_VOLUME / "0001.json").read_text())
    by_case = {c["case"]: c for c in manifest["cases"]}
    cases = [e["case"] for e in gold["entries"]]
    assert sorted(cases) == ["boundary_1963_unrenewed", "boundary_1964_automatic"]
    assert [by_case[c]["status"] for c in sorted(cases)] == ["likely_public_domain", "protected"]


def test_cce_planted_cases_and_collection(cworld, vworld):
    root, manifest = cworld
    statuses = Counter(c["status"] for c in manifest["cases"])
    assert set(statuses) == {"public_domain", "likely_public_domain", "protected", "needs_review"}
    lp4701 = [c for c in manifest["cases"] if c["reg_id"] == "LP4701"]
    assert len(lp4701) == 2 and len({c["reg_date"] for c in lp4701}) == 2
    assert {c["status"] for c in lp4701} == {"likely_public_domain", "protected"}
    by_case = {c["case"]: c for c in manifest["cases"]}
    assert by_case["boundary_1930_renewed"]["status"] == "public_domain"
    assert by_case["boundary_1930_renewed"]["status_as_of_2025_12_31"] == "protected"
    years = {int(c["reg_date"][:4]) for c in manifest["cases"]}
    assert {1930, 1931, 1963, 1964, 1977, 1978} <= years
    cprs = (root / "cprs_export.tsv").read_text().splitlines()
    assert any("\tLP4701\t1954-09-14\tRE101234\t1982-03-01\t" in ln for ln in cprs)
    coll = manifest["collection"]
    assert coll == expected_collection()
    assert len(coll["included"]) >= 3
    vroot, vman = vworld
    top = set(vman["top100"]["1934"]) | set(vman["top100"]["1926"])
    assert set(coll["included"]) <= top
    assert coll["excluded"]["tt9100002"] == ["status:protected"]  # in the top 100 but renewed
    assert "not_sound" in coll["excluded"]["tt9000001"]  # 1926: public domain, but silent
    assert by_case["silent_pre1931_sheikh"]["status"] == "public_domain"
    # two 1926 films have no registration at all: public domain by their release year (R1_release_date);
    # one is a sound film on IA (included), the other's IA item has no sound metadata (needs_review)
    registered = {c["imdb"] for c in manifest["cases"] if c.get("imdb")}
    assert coll["r1_release_date"] == ["tt9000004", "tt9000005"] and not registered & set(coll["r1_release_date"])
    assert "tt9000004" in coll["included"] and coll["needs_review"] == {"tt9000005": ["sound:unknown"]}
    assert {"tt9000004", "tt9000005"} <= set(vman["top100"]["1926"])
    on_ia = {json.loads(p.read_text())["identifier"] for p in (vroot / "ia").glob("*/_item.json")}
    films = {f.imdb: f for f in FILMS}
    assert all(films[i].ia_identifier in on_ia and films[i].sound for i in coll["included"])


@pytest.mark.realdata
def test_cprs_export_has_nypl_columns(cworld, realdata_dir):
    root, _ = cworld
    real = (realdata_dir / "cce" / "nypl_cce_renewals_1978-from-db_sample.tsv").read_text().splitlines()[0]
    assert (root / "cprs_export.tsv").read_text().splitlines()[0] == real


@pytest.mark.realdata
def test_variety_entry_shape_matches_real_ocr(vworld, realdata_dir):
    """The synthetic entry line has the shape of a real one (variety188-1952-10_0344)."""
    real = (realdata_dir / "variety_ocr" / "variety188-1952-10_0344.txt").read_text()
    shape = re.compile(r"[A-Z][\w ]+ \([^)]+\) \([\d,]+; [\d$.-]+\)— ?[\"“][^\"”]+[\"”] \([^)]+\)")
    assert shape.search(real)
    gold = load_gold(vworld[0])[("variety114-1934-03", 2)]
    assert shape.search(gold["text"])


def _hocr_pages(item_dir, stem):
    """The page texts of a sample item's hOCR search text + page index (no form feed in _djvu.txt)."""
    from extractors.ia_pages import hocr_pages

    return hocr_pages((item_dir / f"{stem}_hocr_searchtext.txt.gz").read_bytes(),
                      (item_dir / f"{stem}_hocr_pageindex.json.gz").read_bytes())
