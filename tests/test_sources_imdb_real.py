"""IMDb as it really answers (issue 16): the captured JSON-LD blocks, the reference page's
``__NEXT_DATA__``, the legacy parental-guide fragment and the heads of the six datasets in
../shared/realdata/live parse to the values they hold; the dataset readers stream and filter by
id; the WAF answer is recognised; the sample world's IMDb shapes join back to the films."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from extractors.sources.imdb import (
    is_waf_challenge,
    next_data,
    parse_certificates,
    parse_imdb_title,
    parse_json_ld,
    parse_next_data_title,
)
from extractors.sources.imdb_datasets import (
    COLUMNS,
    DATASETS,
    DatasetLayoutError,
    read_dataset,
    read_imdb_facts,
    read_title_akas,
    read_title_basics,
    read_title_principals,
)
from validators.ratings import normalize_certificates

LIVE = ("live", "imdb_pages")


def _page_with_ld(text: str) -> str:
    return f'<html><head><script type="application/ld+json">{text}</script></head><body></body></html>'


def _next_html(obj: dict) -> str:
    return f'<html><body><script id="__NEXT_DATA__" type="application/json">{json.dumps(obj)}</script></body></html>'


# --------------------------------------------------------------------------------------------
# JSON-LD captures
# --------------------------------------------------------------------------------------------
JSONLD = {
    # file: (id, name, year, minutes, genres, rating, votes, directors, writers)
    "imdb_jsonld_2020_12-Angry-Men.entry.json": ("tt0050083", "12 Angry Men", 1957, 96, ["Crime", "Drama"], 8.9,
                                                  657574, ["Sidney Lumet"], ["Reginald Rose"]),
    "imdb_jsonld_2020_Chinatown.entry.json": ("tt0071315", "Chinatown", 1974, 130, ["Drama", "Mystery", "Thriller"],
                                              8.2, 282629, ["Roman Polanski"], ["Robert Towne", "Roman Polanski"]),
    "imdb_jsonld_2020_Network.entry.json": ("tt0074958", "Network", 1976, 121, ["Drama"], 8.1, 139853,
                                            ["Sidney Lumet"], ["Paddy Chayefsky"]),
    "imdb_jsonld_2020_Pleasantville.entry.json": ("tt0120789", "Pleasantville", 1998, 124,
                                                  ["Comedy", "Drama", "Fantasy"], 7.5, 118631, ["Gary Ross"], ["Gary Ross"]),
    "imdb_jsonld_tt0201290_absolute-urls.json": ("tt0201290", "The Underground Comedy Movie", 1999, 88, ["Comedy"],
                                                 1.9, 2736, ["Vince Offer"], ["Vince Offer", "Dante"]),
}


@pytest.mark.realdata
@pytest.mark.parametrize("name", sorted(JSONLD))
def test_json_ld_captures_parse_to_their_values(realdata_dir, name):
    text = (realdata_dir.joinpath(*LIVE) / name).read_text(encoding="utf-8")
    rec = parse_imdb_title(_page_with_ld(text), "", "", None)  # no dataset row: the page alone
    tt, title, year, minutes, genres, rating, votes, directors, writers = JSONLD[name]
    assert (rec.imdb_id, rec.title, rec.year, rec.runtime_min) == (tt, title, year, minutes)
    assert rec.genres == genres and rec.rating == rating and rec.votes == votes
    assert rec.directors == directors and rec.writers == writers
    assert rec.topics and all(t == t.strip() and t for t in rec.topics)
    assert rec.countries == [] and rec.languages == []  # JSON-LD has neither; nothing invented
    assert len(rec.cast) >= 3 and all(c.actor for c in rec.cast)


@pytest.mark.realdata
def test_json_ld_entities_are_unescaped_after_json_loads(realdata_dir):
    raw = (realdata_dir.joinpath(*LIVE) / "imdb_jsonld_tt0201290_absolute-urls.json").read_text(encoding="utf-8")
    assert "&quot;" in raw
    ld = parse_json_ld(json.loads(raw))
    body = ld["review"]["reviewBody"]
    assert '"SlapChop" Vince Offer' in body and "it's exactly what it sounds like" in body
    assert "&quot;" not in body and "&apos;" not in body
    rec = parse_imdb_title(_page_with_ld(raw), "", "", None)
    assert rec.topics == ["crude humor", "nipples", "female frontal nudity", "defecation", "supermodel"]


# --------------------------------------------------------------------------------------------
# __NEXT_DATA__ (reference page, 2025-10)
# --------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def matrix_next(realdata_dir) -> dict:
    return json.loads((realdata_dir.joinpath(*LIVE) / "imdb_next_data_reference_tt0133093_2025-10_trimmed.json")
                      .read_text(encoding="utf-8"))


@pytest.mark.realdata
def test_next_data_capture_gives_pages_only_fields(matrix_next):
    html = _next_html(matrix_next)
    page = next_data(html)
    assert page["tconst"] == "tt0133093"
    nd = parse_next_data_title(page)
    assert nd["countries"] == ["United States", "Australia"]  # countriesDetails (ids US, AU)
    assert nd["languages"] == ["English"]
    assert nd["keywords"] == ["artificial reality", "war with machines", "simulated reality", "dystopia",
                              "questioning reality"]
    assert len(nd["certificates"]) == 64
    us = [c for c in nd["certificates"] if c.startswith("United States:")]
    assert sorted(c.split("::")[0] for c in us) == ["United States:R", "United States:TV-14"]
    assert "Canada:14A::(Alberta, British Columbia, Saskatchewan)" in nd["certificates"]
    mapped, _ = normalize_certificates(nd["certificates"])
    assert {r.country: r.label for r in mapped}["United States"] == "R"  # not the localised "T"
    assert nd["summaries"][0].startswith("Thomas A. Anderson is a man living two lives.")
    assert '"Neo"' in nd["synopsis"] and "&quot;" not in nd["synopsis"] and "<br" not in nd["synopsis"]
    assert nd["outline"].startswith("When a beautiful stranger leads computer hacker Neo")
    assert (nd["title"], nd["year"], nd["runtime_min"], nd["rating"], nd["votes"], nd["genres"]) == (
        "The Matrix", 1999, 136, 8.7, 2193347, ["Action", "Sci-Fi"])


@pytest.mark.realdata
def test_next_data_above_the_fold_country_ids(matrix_next):
    trimmed = json.loads(json.dumps(matrix_next))
    del trimmed["props"]["pageProps"]["mainColumnData"]["countriesDetails"]
    nd = parse_next_data_title(next_data(_next_html(trimmed)))
    assert nd["countries"] == ["United States"]  # aboveTheFoldData.countriesOfOrigin: only the id "US"


@pytest.mark.realdata
def test_title_record_from_next_data_and_dataset_row(matrix_next):
    row = {"tconst": "tt0133093", "primaryTitle": "The Matrix", "startYear": 1999, "runtimeMinutes": 136,
           "genres": "Action,Sci-Fi", "averageRating": 8.7, "numVotes": 2200000,
           "directors": ["Lana Wachowski", "Lilly Wachowski"], "writers": ["Lilly Wachowski", "Lana Wachowski"]}
    rec = parse_imdb_title(_next_html(matrix_next), "", "", row)
    assert (rec.title, rec.votes, rec.directors) == ("The Matrix", 2200000, ["Lana Wachowski", "Lilly Wachowski"])
    assert rec.countries == ["United States", "Australia"] and rec.languages == ["English"]
    assert rec.plot.startswith("Thomas A. Anderson") and rec.synopsis.startswith("In 1999, in an unnamed city")
    assert "United States:R::(certificate #36569)" in rec.certificates
    assert rec.topics[0] == "artificial reality"


# --------------------------------------------------------------------------------------------
# Parental guide: legacy HTML (capture) and the current __NEXT_DATA__ layout
# --------------------------------------------------------------------------------------------
@pytest.mark.realdata
def test_legacy_parental_guide_fragment(realdata_dir):
    html = (realdata_dir.joinpath(*LIVE) / "imdb_parentalguide_legacy_tt9006564_fragment_2024.html").read_text(encoding="utf-8")
    assert parse_certificates(html) == [
        "Canada:PG::(Alberta)", "Canada:PG::(British Columbia)", "Canada:G::(Quebec)", "India:UA", "Ireland:12A",
        "Luxembourg:12", "Singapore:PG13", "United Kingdom:12A", "United States:Not Rated",
        "United Arab Emirates:PG-13"]


def test_current_parental_guide_layout():
    page = {"props": {"pageProps": {"contentData": {
        "entityMetadata": {"certificate": {"rating": "R"}},
        "contentRatingData": {"ratingReason": "Rated R for sci-fi violence and brief language"},
        "certificates": [{"country": "United States", "ratings": [{"rating": "R"}, {"rating": "TV-14"}]},
                         {"country": {"id": "GB", "text": "United Kingdom"}, "ratings": [{"rating": "15"}]},
                         {"country": "Canada", "ratings": [{"rating": "14A", "extraInformation": "(Alberta)"}]}],
        "categories": [{"id": "NUDITY", "items": [{"text": "A kiss.", "isSpoiler": False}]}]}}}}
    assert parse_certificates(_next_html(page)) == ["United States:R", "United States:TV-14", "United Kingdom:15",
                                                    "Canada:14A::(Alberta)"]
    empty = {"props": {"pageProps": {"contentData": {"certificates": []}}}}
    assert parse_certificates(_next_html(empty)) == []


# --------------------------------------------------------------------------------------------
# WAF
# --------------------------------------------------------------------------------------------
@pytest.mark.realdata
def test_waf_capture_is_a_challenge(realdata_dir):
    text = (realdata_dir.joinpath(*LIVE) / "imdb_waf_202_curl_headers_kometa-pr3162_2026-06.txt").read_text()
    status = int(text.split("HTTP/1.1 ", 1)[1].split()[0])
    headers = dict(ln.split(": ", 1) for ln in text.splitlines()[2:] if ": " in ln)
    assert (status, headers) == (202, {"content-length": "0"})
    assert is_waf_challenge(status, headers, b"")


def test_waf_rules():
    assert is_waf_challenge(202, {"X-Amzn-Waf-Action": "challenge"}, b"")
    assert is_waf_challenge(405, {"x-amzn-waf-action": "captcha"}, b"<html>captcha</html>")
    assert is_waf_challenge(200, {"x-amzn-waf-action": "challenge"}, b"<html></html>")
    assert not is_waf_challenge(200, {"content-type": "text/html"}, b"<html>title</html>")
    assert not is_waf_challenge(202, {}, b"{\"accepted\": true}")
    assert not is_waf_challenge(404, {}, b"")


# --------------------------------------------------------------------------------------------
# Datasets
# --------------------------------------------------------------------------------------------
HEADS = {  # dataset: (capture file, rows)
    "title.basics.tsv": ("title.basics_2025-02_head200.tsv", 200),
    "title.ratings.tsv": ("title.ratings_2020-11_head200.tsv", 200),
    "title.crew.tsv": ("title.crew_2025-02_head200.tsv", 200),
    "title.principals.tsv": ("title.principals_2021-01_head99.tsv", 99),
    "title.akas.tsv": ("title.akas_2021-05_head200.tsv", 200),
    "name.basics.tsv": ("name.basics_2025-02_head200.tsv", 200),
}


@pytest.mark.realdata
@pytest.mark.parametrize("name", DATASETS)
def test_dataset_heads_stream_with_their_layout(realdata_dir, name, tmp_path):
    path = realdata_dir / "live" / "imdb_datasets" / HEADS[name][0]
    df = read_dataset(path, COLUMNS[name])
    assert df.height == HEADS[name][1] and df.columns == COLUMNS[name]
    raw_lines = path.read_text(encoding="utf-8").splitlines()[1:]
    assert df.null_count().sum_horizontal().item() == sum(ln.split("\t").count("\\N") for ln in raw_lines)
    first = raw_lines[0].split("\t")
    assert df.row(0) == tuple(None if v == "\\N" else v for v in first)
    gz = tmp_path / f"{name}.gz"
    gz.write_bytes(gzip.compress(path.read_bytes()))
    assert read_dataset(gz, COLUMNS[name]).equals(df)  # the gzip reader streams the same rows
    some = sorted(set(df[COLUMNS[name][0]].to_list()))[1:3]
    only = read_dataset(path, COLUMNS[name], some)
    assert set(only[COLUMNS[name][0]].to_list()) == set(some)
    assert read_dataset(gz, COLUMNS[name], some).equals(only)
    other = next(n for n in DATASETS if COLUMNS[n] != COLUMNS[name])
    with pytest.raises(DatasetLayoutError):
        read_dataset(path, COLUMNS[other])


@pytest.mark.realdata
def test_dataset_values_quotes_nulls_and_order(realdata_dir):
    d = realdata_dir / "live" / "imdb_datasets"
    basics = {r["tconst"]: r for r in read_title_basics(d / HEADS["title.basics.tsv"][0]).to_dicts()}
    assert basics["tt0000001"]["primaryTitle"] == "Carmencita" and basics["tt0000001"]["endYear"] is None
    assert basics["tt0000003"]["originalTitle"] == "Pauvre Pierrot" and basics["tt0000001"]["runtimeMinutes"] == 1
    names = read_dataset(d / HEADS["name.basics.tsv"][0], COLUMNS["name.basics.tsv"], ["nm0000003"]).to_dicts()
    assert names == [{"nconst": "nm0000003", "primaryName": "Brigitte Bardot", "birthYear": "1934", "deathYear": None,
                      "primaryProfession": "actress,music_department,producer",
                      "knownForTitles": "tt0057345,tt0049189,tt0056404,tt0054452"}]
    principals = read_title_principals(d / HEADS["title.principals.tsv"][0], ["tt0000001"]).to_dicts()
    assert principals[0]["characters"] == '["Herself"]' and [p["ordering"] for p in principals] == sorted(
        p["ordering"] for p in principals)
    akas = read_title_akas(d / HEADS["title.akas.tsv"][0], ["tt0000001"])
    assert akas["ordering"].to_list() == list(range(1, akas.height + 1))
    assert akas.columns[0] == "titleId" and akas["isOriginalTitle"].to_list().count(True) <= 1


def test_filtered_read_of_a_large_dataset(tmp_path):
    n = 300_000
    path = tmp_path / "title.basics.tsv"
    with path.open("w", encoding="utf-8") as fh:
        fh.write("\t".join(COLUMNS["title.basics.tsv"]) + "\n")
        for i in range(n):
            tt = f"tt{i:07d}" if i % 2 else f"tt{10_000_000 + i:08d}"  # 7- and 8-digit ids, interleaved
            fh.write(f'{tt}\tmovie\tFilm "{i}"\tFilm\'s {i}\t0\t{1900 + i % 120}\t\\N\t{80 + i % 60}\tDrama,Comedy\n')
    wanted = ["tt10000000", "tt0000001", "tt10299998", "tt0299999", "tt0150001", "tt99999999"]
    df = read_title_basics(path, wanted)
    assert sorted(df["tconst"].to_list()) == sorted(wanted[:-1])  # the absent id yields nothing
    row = {r["tconst"]: r for r in df.to_dicts()}["tt10299998"]
    assert (row["primaryTitle"], row["originalTitle"], row["startYear"], row["endYear"]) == (
        'Film "299998"', "Film's 299998", 1900 + 299998 % 120, None)
    gz = tmp_path / "title.basics.tsv.gz"
    with path.open("rb") as src, gzip.open(gz, "wb", compresslevel=1) as out:
        out.write(src.read())
    assert read_title_basics(gz, wanted).sort("tconst").equals(df.sort("tconst"))


def _write_tsv(path: Path, header: list[str], rows: list[list[str]]) -> None:
    path.write_text("\n".join("\t".join(r) for r in [header, *rows]) + "\n", encoding="utf-8")


def test_read_imdb_facts_joins_the_six_datasets(tmp_path):
    d = tmp_path
    _write_tsv(d / "title.basics.tsv", COLUMNS["title.basics.tsv"], [
        ["tt0000001", "movie", "One", "Un", "0", "1990", "\\N", "100", "Drama"],
        ["tt10000002", "movie", "Two", "Two", "0", "2021", "\\N", "\\N", "\\N"],
        ["tt0000003", "movie", "Not wanted", "Not wanted", "0", "2000", "\\N", "90", "Drama"]])
    _write_tsv(d / "title.ratings.tsv", COLUMNS["title.ratings.tsv"], [["tt10000002", "6.5", "120"],
                                                                       ["tt0000001", "7.0", "1000"]])
    _write_tsv(d / "title.crew.tsv", COLUMNS["title.crew.tsv"], [["tt0000001", "nm0000010,nm10000011", "nm0000012"],
                                                                 ["tt10000002", "\\N", "nm0000099"]])
    _write_tsv(d / "title.principals.tsv", COLUMNS["title.principals.tsv"], [
        ["tt0000001", "10", "nm0000013", "actor", "\\N", '["The \\"Tenth\\"", "Young Ten"]'],
        ["tt0000001", "2", "nm0000010", "director", "\\N", "\\N"],
        ["tt0000001", "1", "nm10000014", "actress", "\\N", '["Anna"]'],
        ["tt0000001", "3", "nm0000015", "self", "\\N", '["Herself"]']])
    _write_tsv(d / "title.akas.tsv", COLUMNS["title.akas.tsv"], [
        ["tt0000001", "1", "Un", "\\N", "\\N", "original", "\\N", "1"],
        ["tt0000001", "10", "One!", "XWW", "en", "working", "\\N", "0"],
        ["tt0000001", "2", "One", "US", "\\N", "imdbDisplay", "\\N", "0"]])
    _write_tsv(d / "name.basics.tsv", COLUMNS["name.basics.tsv"], [
        ["nm0000010", "Dee Rector", "1950", "\\N", "director", "tt0000001"],
        ["nm10000011", "Co Director", "\\N", "\\N", "director", "\\N"],
        ["nm0000012", "Wri Ter", "\\N", "\\N", "writer", "\\N"],
        ["nm0000013", "Ten Actor", "\\N", "\\N", "actor", "\\N"],
        ["nm10000014", "Anna Actress", "\\N", "\\N", "actress", "\\N"]])
    facts, stats = read_imdb_facts(d, ["tt0000001", "tt10000002", "tt7777777"])
    assert sorted(facts) == ["tt0000001", "tt10000002"] and stats["missing"] == []
    one, two = facts["tt0000001"], facts["tt10000002"]
    assert (one["primaryTitle"], one["originalTitle"], one["averageRating"], one["numVotes"]) == ("One", "Un", 7.0, 1000)
    assert one["directors"] == ["Dee Rector", "Co Director"] and one["writers"] == ["Wri Ter"]
    assert [(p["name"], p["ordering"], p["characters"]) for p in one["principals"]] == [
        ("Anna Actress", 1, ["Anna"]), ("Ten Actor", 10, ['The "Tenth"', "Young Ten"])]  # numeric order, self out
    assert [a["title"] for a in one["akas"]] == ["Un", "One", "One!"]
    assert two["directors"] == [] and two["writers"] == [] and two["principals"] == [] and two["akas"] == []
    assert two["runtimeMinutes"] is None and two["genres"] is None
    assert stats["unresolved_names"] == 1  # nm0000099 is not in name.basics: left out, counted
    rec = parse_imdb_title("", "", "", one)  # no title pages at all (e.g. a WAF challenge)
    assert (rec.title, rec.original_title, rec.votes, rec.directors) == ("One", "Un", 1000, ["Dee Rector", "Co Director"])
    assert [(c.actor, c.characters) for c in rec.cast] == [("Anna Actress", ["Anna"]),
                                                           ("Ten Actor", ['The "Tenth"', "Young Ten"])]
    (d / "title.crew.tsv").unlink()
    (d / "name.basics.tsv").unlink()
    facts, stats = read_imdb_facts(d, ["tt0000001"])
    assert sorted(stats["missing"]) == ["name.basics.tsv", "title.crew.tsv"]
    assert "directors" not in facts["tt0000001"] and "principals" not in facts["tt0000001"]  # pages fill these


# --------------------------------------------------------------------------------------------
# The sample world's IMDb shapes join back to the films
# --------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def imdb_world(tmp_path_factory):
    from cinesub.sample import generate

    out = tmp_path_factory.mktemp("imdbworld") / "w"
    return out, generate(out, seed=11, n_films=20)


def test_sample_world_imdb_shapes(imdb_world):
    root, manifest = imdb_world
    films = manifest["films"]
    facts, stats = read_imdb_facts(root / "imdb", [f["true_imdb_id"] for f in films])
    assert stats == {"missing": [], "unresolved_names": 0} and len(facts) == len(films)
    relative = absolute = countries_by_id_only = 0
    for f in films:
        tt = f["true_imdb_id"]
        pages = root / "imdb" / "title" / tt
        index = (pages / "index.html").read_text(encoding="utf-8")
        ld_url = json.loads(index.split('application/ld+json">', 1)[1].split("</script>", 1)[0])["url"]
        relative += ld_url.startswith("/title/")
        absolute += ld_url.startswith("https://www.imdb.com/title/")
        assert "countryOfOrigin" not in index.split("</script>", 1)[0]
        nd = next_data(index)
        countries_by_id_only += "countriesDetails" not in nd["mainColumnData"]
        full = parse_imdb_title(index, (pages / "plotsummary.html").read_text(encoding="utf-8"),
                                (pages / "parentalguide.html").read_text(encoding="utf-8"), facts[tt])
        assert (full.title, full.year, full.runtime_min, full.genres) == (f["title"], f["year"], f["runtime_min"], f["genres"])
        assert full.countries == f["countries"] and full.languages == f["languages"]
        assert full.certificates == f["certificates"]
        # the datasets alone give the credits the pages gave
        bare = parse_imdb_title("", "", "", facts[tt])
        page_only = parse_imdb_title(index, "", "", {"tconst": tt})
        assert bare.directors == page_only.directors and bare.writers == page_only.writers and bare.directors
        assert [c.actor for c in bare.cast] == [c.actor for c in page_only.cast][:len(bare.cast)]
        assert [c.model_dump() for c in full.cast] == [c.model_dump() for c in page_only.cast]
        # the title page's __NEXT_DATA__ alone gives certificates, plots and countries
        assert page_only.certificates == f["certificates"]
        assert (page_only.plot is not None, page_only.synopsis is not None) == (f["has_plot"], f["has_synopsis"])
        assert page_only.synopsis == full.synopsis and page_only.plot == full.plot
    assert relative and absolute and countries_by_id_only


def test_fixture_serves_six_datasets_and_the_waf_challenge(imdb_world):
    import httpx

    from fixtures.pages_server import PagesFixture

    root, manifest = imdb_world
    blocked, open_tt = manifest["films"][0]["true_imdb_id"], manifest["films"][1]["true_imdb_id"]
    with PagesFixture(root, waf_titles=[blocked]) as srv:
        urls = srv.base_urls
        assert set(urls) == {"kim", "csm", "imdb", "imdb_datasets"}
        for name in DATASETS:
            r = httpx.get(f"{urls['imdb_datasets']}/{name}.gz")
            assert r.status_code == 200 and gzip.decompress(r.content) == (root / "imdb" / name).read_bytes()
        assert httpx.get(f"{urls['imdb_datasets']}/title.episode.tsv.gz").status_code == 404
        for page in ("", "plotsummary/", "parentalguide/", "parentalguide"):
            r = httpx.get(f"{urls['imdb']}/title/{blocked}/{page}")
            assert (r.status_code, r.content, r.headers["x-amzn-waf-action"]) == (202, b"", "challenge")
            assert is_waf_challenge(r.status_code, r.headers, r.content)
            ok = httpx.get(f"{urls['imdb']}/title/{open_tt}/{page}")
            assert ok.status_code == 200 and not is_waf_challenge(ok.status_code, ok.headers, ok.content)
        srv.waf_titles.clear()  # the challenge lifted: a later run gets the page
        assert httpx.get(f"{urls['imdb']}/title/{blocked}/").status_code == 200


def test_inventory_takes_credits_from_the_datasets(imdb_world, tmp_path):
    """Inventory level: the films' IMDb records come from the streamed datasets plus the pages,
    every dataset is a ``sources`` row, and a title whose pages are gone (as after a WAF
    challenge) still gets its dataset fields."""
    import shutil

    import duckdb

    from cinesub.settings import load_settings
    from flows.env.sample import SampleEnvironment
    from flows.kernel_context import RunContext
    from flows.kernel_exec import execute
    from flows.stages.subtitles.inventory import InventoryStage

    world, manifest = imdb_world
    root = tmp_path / "world"
    shutil.copytree(world, root, ignore=shutil.ignore_patterns("subtitles"))
    passing = [f for f in manifest["films"] if f["expected_drop_gate"] is None]
    gone = passing[0]["imdb_id"]
    shutil.rmtree(root / "imdb" / "title" / gone)  # no title pages for this one
    settings = load_settings(home=tmp_path / "home")
    stats = execute(InventoryStage(), RunContext(settings=settings, run_id="r1",
                                                 env=SampleEnvironment.attached(settings, world=root)))
    assert stats["imdb_datasets"]["missing"] == [] and stats["imdb_datasets"]["unresolved_names"] == 0
    assert stats["imdb_datasets"]["found"] >= len(passing)
    with duckdb.connect(str(settings.state_db), read_only=True) as con:
        sources = {r[0]: r[1] for r in con.execute(
            "SELECT source, key FROM sources WHERE source LIKE 'imdb_%' AND key LIKE '%.tsv'").fetchall()}
        records = [json.loads(r[0]) for r in con.execute("SELECT imdb FROM films WHERE imdb IS NOT NULL").fetchall()]
    assert sorted(sources.values()) == sorted(DATASETS)
    recs = {r["imdb_id"]: r for r in records}
    for f in passing:
        rec = recs[f["imdb_id"]]
        assert (rec["title"], rec["original_title"], rec["year"], rec["runtime_min"], rec["genres"]) == (
            f["title"], f["title"], f["year"], f["runtime_min"], f["genres"])
        assert rec["votes"] and rec["rating"] and rec["directors"] and rec["writers"] and rec["cast"]
        if f["imdb_id"] != gone:
            assert rec["countries"] == f["countries"] and rec["certificates"] == f["certificates"]
    bare = recs[gone]  # datasets only: credits and principal cast, no page-only fields
    from_page = parse_imdb_title((world / "imdb" / "title" / gone / "index.html").read_text(encoding="utf-8"), "", "",
                                 {"tconst": gone})
    assert (bare["directors"], bare["writers"]) == (from_page.directors, from_page.writers)
    assert [c["actor"] for c in bare["cast"]] == [c.actor for c in from_page.cast][:len(bare["cast"])]
    assert bare["certificates"] == [] and bare["plot"] is None and bare["countries"] == []
    assert 1 <= len(bare["cast"]) <= 10 and all(c["characters"] for c in bare["cast"])
