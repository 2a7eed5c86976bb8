"""Parsers for Kids-in-Mind, Common Sense Media and IMDb (extractors/sources)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from cinesub.sample import generate
from extractors.sources.csm import parse_csm
from extractors.sources.imdb import (
    canonical_imdb_id,
    parse_certificates,
    parse_imdb_title,
    read_title_basics,
    read_title_ratings,
)
from extractors.sources.kim import parse_kim, parse_kim_language_counts


# --------------------------------------------------------------------------------------------
# IMDb ids
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "link, expected",
    [
        ("https://www.imdb.com/title/tt0111161/", ("tt0111161", "ok")),
        ("http://www.imdb.com/title/tt0111161", ("tt0111161", "ok")),
        ("https://m.imdb.com/title/tt0111161/?ref_=fn_al_tt_1", ("tt0111161", "ok")),
        ("http://imdb.com/title/tt0111161/reviews?ref_=tt_urv", ("tt0111161", "ok")),
        ("https://www.imdb.com/title/tt10872600/parentalguide", ("tt10872600", "ok")),
        ("www.imdb.com/title/TT0111161/", ("tt0111161", "ok")),
        ("http://www.imdb.com/Title?0111161", ("tt0111161", "ok")),
        ("tt0111161", ("tt0111161", "ok")),
        (" tt10872600 ", ("tt10872600", "ok")),
        (None, (None, "missing")),
        ("", (None, "missing")),
        ("   ", (None, "missing")),
        ("https://www.imdb.com/title/tt12345/", (None, "malformed")),
        ("https://www.imdb.com/title/tt12345678901/", (None, "malformed")),
        ("tt123456", (None, "malformed")),
        ("https://www.imdb.com/find?q=the+harbour+lights+2014&s=tt&ref_=fn_al_tt_mr", (None, "malformed")),
        ("https://www.imdb.com/search/title/?title=harbour", (None, "malformed")),
        ("https://www.themoviedb.org/movie/tt0111161", (None, "malformed")),
        ("https://www.imdb.com/", (None, "malformed")),
        ("The Harbour Lights (2014)", (None, "malformed")),
    ],
)
def test_canonical_imdb_id(link, expected):
    assert canonical_imdb_id(link) == expected


# --------------------------------------------------------------------------------------------
# Kids-in-Mind
# --------------------------------------------------------------------------------------------
KIM_PAGE = """<!DOCTYPE html><html><head><meta charset="UTF-8">
<title>Night Train to Varna [2016] [PG-13] - 2.4.6 | Parents Guide &amp; Movie Review | Kids-In-Mind.com</title>
<link rel="canonical" href="https://kids-in-mind.com/n/night-train-to-varna-2016-parents-guide.htm">
</head><body>
<h1 class="entry-title">Night Train to Varna (2016) [PG-13]</h1>
<div class="et_pb_text_inner">
<p class="ratings"><strong>SEX/NUDITY 2 - VIOLENCE/GORE 4 - LANGUAGE 6</strong></p>
<p>A widowed conductor finds a stowaway. [1:52]</p>
<p><a href="https://www.imdb.com/title/tt4567890/" target="_blank">IMDb</a> | <a href="https://amazon.com/x">Amazon</a></p>
<p><strong>SEX/NUDITY 2</strong> - A couple kisses.</p>
<p><strong>LANGUAGE 6</strong> - about 12 F-words and its derivatives, 3 scatological terms,
 1 anatomical term, 9 mild obscenities, name-calling (idiot), 14 religious exclamations (e.g. Oh My God).</p>
<p><strong>MESSAGE:</strong> Kindness to strangers can change a life.</p>
</div></body></html>"""


def test_parse_kim_reads_every_field():
    rec = parse_kim(KIM_PAGE, "https://kids-in-mind.com/night-train-to-varna-2016.htm")
    assert rec.kim_id == "night-train-to-varna-2016"
    assert rec.url == "https://kids-in-mind.com/n/night-train-to-varna-2016-parents-guide.htm"
    assert (rec.title, rec.year) == ("Night Train to Varna", 2016)
    assert rec.imdb_link == "https://www.imdb.com/title/tt4567890/"
    assert rec.key_message == "Kindness to strangers can change a life."
    assert rec.language_content.rating == 6
    assert rec.language_content.summary.startswith("about 12 F-words")
    assert rec.language_content.source == rec.url
    assert len(rec.raw_sha256) == 64
    assert parse_kim_language_counts(rec.language_content.summary) == {
        "f_words": 12, "scatological": 3, "anatomical": 1, "mild": 9, "religious": 14}


@pytest.mark.parametrize(
    "heading, title, year",
    [
        ("<h1>Blue Harvest | 2003 | PG | 1.2.3</h1>", "Blue Harvest", 2003),
        ("<h1>Blue Harvest [2003] [PG] - 1.2.3</h1>", "Blue Harvest", 2003),
        ("<title>Blue Harvest [2003] [PG] - 1.2.3 | Kids-In-Mind.com</title>", "Blue Harvest", 2003),
        ("<h1>Blue Harvest (2003)</h1>", "Blue Harvest", 2003),
    ],
)
def test_parse_kim_older_heading_forms(heading, title, year):
    rec = parse_kim(f"<html><body>{heading}<p>nothing else</p></body></html>", "https://kids-in-mind.com/b/blueharvest.htm")
    assert (rec.title, rec.year) == (title, year)
    assert rec.kim_id == "b/blueharvest"  # "<letter>/<slug>", the mirror's path


def test_parse_kim_tolerates_missing_parts():
    rec = parse_kim("<html><body><h1>Odd Page</h1><p>LANGUAGE</p><div><p>unclosed", "https://kids-in-mind.com/o/odd.htm")
    assert rec.title == "Odd Page" and rec.year is None
    assert rec.imdb_link is None and rec.key_message is None
    assert rec.language_content.rating is None and rec.language_content.summary is None
    empty = parse_kim("", "https://kids-in-mind.com/e/empty.htm")
    assert empty.kim_id == "e/empty" and empty.title == ""
    assert parse_kim_language_counts(None) == {"f_words": 0, "scatological": 0, "anatomical": 0, "mild": 0, "religious": 0}


def test_parse_kim_falls_back_to_any_imdb_title_href():
    page = '<h1>X (1999)</h1><p><a href="http://www.imdb.com/title/tt0133093/">The Matrix on the database</a></p>'
    assert parse_kim(page, "u/x.htm").imdb_link == "http://www.imdb.com/title/tt0133093/"


# --------------------------------------------------------------------------------------------
# Common Sense Media
# --------------------------------------------------------------------------------------------
CSM_PAGE = """<html><head><title>Night Train to Varna Movie Review | Common Sense Media</title>
<link rel="canonical" href="https://www.commonsensemedia.org/movie-reviews/night-train-to-varna"></head>
<body><div class="review-product-summary"><h1 class="heading--page">Night Train to Varna</h1>
<div class="rating"><span class="rating__age">age 13+</span></div></div>
<section id="review-view-parents-need-to-know"><h2>Parents Need to Know</h2><p>Parents need to know that...</p></section>
<section id="review-view-story"><h2>What's the Story?</h2><p>In NIGHT TRAIN TO VARNA, a conductor (Ana Pop)
finds a girl hiding in the mail car.</p><p>They cross three borders together.</p></section>
<ul><li><strong>In theaters:</strong> March 4, 2016</li>
<li><a href="https://www.imdb.com/title/tt4567890/">IMDb</a></li></ul></body></html>"""


def test_parse_csm_reads_every_field():
    rec = parse_csm(CSM_PAGE, "file:///tmp/csm/night-train-to-varna.html")
    assert rec.csm_id == "night-train-to-varna"
    assert rec.url == "https://www.commonsensemedia.org/movie-reviews/night-train-to-varna"
    assert (rec.title, rec.year, rec.age_suitability) == ("Night Train to Varna", 2016, "13+")
    assert rec.imdb_link == "https://www.imdb.com/title/tt4567890/"
    assert rec.storyline == ("In NIGHT TRAIN TO VARNA, a conductor (Ana Pop) finds a girl hiding in the mail car.\n\n"
                             "They cross three borders together.")


def test_parse_csm_tolerates_missing_parts():
    rec = parse_csm("<html><head><title>Lost Kite Movie Review | Common Sense Media</title></head><body></body></html>",
                    "https://www.commonsensemedia.org/movie-reviews/lost-kite")
    assert (rec.csm_id, rec.title) == ("lost-kite", "Lost Kite")
    assert rec.year is None and rec.imdb_link is None and rec.age_suitability is None and rec.storyline is None
    heading_only = parse_csm("<h1>Kite</h1><div><h2>What's the Story?</h2>A kite is lost.</div>", "x/kite")
    assert heading_only.storyline == "A kite is lost."


# --------------------------------------------------------------------------------------------
# IMDb datasets
# --------------------------------------------------------------------------------------------
BASICS = (
    "tconst\ttitleType\tprimaryTitle\toriginalTitle\tisAdult\tstartYear\tendYear\truntimeMinutes\tgenres\n"
    "tt0000009\tmovie\tMiss Jerry\tMiss Jerry\t0\t1894\t\\N\t45\tRomance\n"
    "tt0111161\tmovie\tThe \"Shawshank\" Redemption\tThe Shawshank Redemption\t0\t1994\t\\N\t142\tDrama\n"
    "tt0903747\ttvSeries\tBreaking Bad\tBreaking Bad\t0\t2008\t2013\t49\tCrime,Drama,Thriller\n"
    "tt9999999\tmovie\tNo Data\tNo Data\t0\t\\N\t\\N\tReality-TV\t\\N\n"
)
RATINGS = "tconst\taverageRating\tnumVotes\ntt0111161\t9.3\t2900000\ntt0903747\t9.5\t2100000\n"


def test_read_title_basics_and_ratings(tmp_path):
    (tmp_path / "b.tsv").write_text(BASICS)
    (tmp_path / "r.tsv").write_text(RATINGS)
    df = read_title_basics(tmp_path / "b.tsv")
    assert df.columns == ["tconst", "titleType", "primaryTitle", "originalTitle", "isAdult", "startYear",
                          "endYear", "runtimeMinutes", "genres"]
    rows = {r["tconst"]: r for r in df.to_dicts()}
    assert rows["tt0111161"]["primaryTitle"] == 'The "Shawshank" Redemption'
    assert rows["tt0111161"]["startYear"] == 1994 and rows["tt0111161"]["endYear"] is None
    assert rows["tt0903747"]["genres"] == "Crime,Drama,Thriller" and rows["tt0903747"]["endYear"] == 2013
    assert rows["tt9999999"]["runtimeMinutes"] is None and rows["tt9999999"]["genres"] is None
    assert rows["tt0000009"]["isAdult"] is False
    only = read_title_basics(tmp_path / "b.tsv", ids=["tt0903747"])
    assert only["tconst"].to_list() == ["tt0903747"]
    with gzip.open(tmp_path / "b.tsv.gz", "wt") as fh:
        fh.write(BASICS)
    assert read_title_basics(tmp_path / "b.tsv.gz").equals(df)
    rt = read_title_ratings(tmp_path / "r.tsv")
    assert rt.to_dicts()[0] == {"tconst": "tt0111161", "averageRating": 9.3, "numVotes": 2900000}


# --------------------------------------------------------------------------------------------
# IMDb title pages
# --------------------------------------------------------------------------------------------
LD = {
    "@context": "https://schema.org", "@type": "Movie", "url": "https://www.imdb.com/title/tt0111161/",
    "name": "The Shawshank Redemption", "description": "Two imprisoned men bond over a number of years.",
    "aggregateRating": {"@type": "AggregateRating", "ratingValue": 9.3, "ratingCount": 2900000},
    "genre": ["Drama"], "datePublished": "1994-10-14", "keywords": "prison,friendship,hope",
    "actor": [{"@type": "Person", "name": "Tim Robbins"}, {"@type": "Person", "name": "Morgan Freeman"}],
    "director": [{"@type": "Person", "name": "Frank Darabont"}],
    "creator": [{"@type": "Organization", "url": "https://www.imdb.com/company/co0040620/"},
                {"@type": "Person", "name": "Stephen King"}, {"@type": "Person", "name": "Frank Darabont"}],
    "duration": "PT2H22M", "countryOfOrigin": [{"@type": "Country", "name": "United States"}],
    "inLanguage": [{"@type": "Language", "name": "English"}],
}
INDEX = f"""<html><head><title>The Shawshank Redemption (1994) - IMDb</title>
<script type="application/ld+json">{json.dumps(LD)}</script></head><body>
<div data-testid="title-cast-item"><a data-testid="title-cast-item__actor" href="/name/nm1/">Tim Robbins</a>
<ul><li><a data-testid="cast-item-characters-link"><span>Andy Dufresne</span></a></li></ul></div>
<div data-testid="title-cast-item"><a data-testid="title-cast-item__actor" href="/name/nm2/">Morgan Freeman</a>
<ul><li><a data-testid="cast-item-characters-link"><span>Ellis Boyd &#39;Red&#39; Redding</span></a></li></ul>
<span class="title-cast-item__attribute">(voice)</span></div></body></html>"""
PLOT_MODERN = """<section data-testid="sub-section-summaries"><ul>
<li><div class="ipc-html-content-inner-div">Two imprisoned men bond over years.</div><div>—Author A</div></li>
<li><div class="ipc-html-content-inner-div">A banker is sentenced to life.</div></li></ul></section>
<section data-testid="sub-section-synopsis"><ul><li><div class="ipc-html-content-inner-div">In 1947, Andy is convicted.<br/><br/>Years later he escapes.</div></li></ul></section>"""
PLOT_OLD = """<ul id="plot-summaries-content"><li class="ipl-zebra-list__item"><p>Old-layout summary.</p>
<div class="author-container"><em>&mdash;<a href="/user">someone</a></em></div></li></ul>
<ul id="plot-synopsis-content"><li class="ipl-zebra-list__item" id="no-synopsis-content">
It looks like we don't have a Synopsis for this title yet. <a href="/x">Be the first to contribute!</a></li></ul>"""
GUIDE_INLINE = """<table><tr id="certificates"><td>Certification</td><td><ul class="ipl-inline-list">
<li class="ipl-inline-list__item"><a href="/search/title?certificates=GB:15">United Kingdom:15</a></li>
<li class="ipl-inline-list__item"><a href="/search/title?certificates=GB:12">United Kingdom:12</a> (DVD rating)</li>
<li class="ipl-inline-list__item"><a href="/search/title?certificates=DE:o.Al.">Germany:o.Al.</a></li>
<li class="ipl-inline-list__item"><a href="/search/title?certificates=US:TV-14">USA:TV-14</a>(TV rating)</li>
</ul></td></tr></table>"""
GUIDE_MODERN = """<section data-testid="certificates"><ul>
<li data-testid="certificates-item"><span class="ipc-metadata-list-item__label">South Korea</span><div><ul>
<li><a href="/x">18</a></li><li><a href="/x">15</a><span class="ipc-metadata-list-item__list-content-item--subText">(re-rating)</span></li></ul></div></li>
<li data-testid="certificates-item"><span class="ipc-metadata-list-item__label">France</span><div><ul>
<li><a href="/x">Tous publics</a></li></ul></div></li></ul></section>"""


def test_parse_imdb_title_joins_row_and_pages():
    row = {"tconst": "tt0111161", "primaryTitle": "The Shawshank Redemption", "startYear": 1994,
           "runtimeMinutes": 142, "genres": "Drama", "averageRating": 9.3}
    rec = parse_imdb_title(INDEX, PLOT_MODERN, GUIDE_INLINE, row)
    assert (rec.imdb_id, rec.title, rec.year, rec.runtime_min, rec.rating) == ("tt0111161", "The Shawshank Redemption", 1994, 142, 9.3)
    assert rec.genres == ["Drama"] and rec.countries == ["United States"] and rec.languages == ["English"]
    assert rec.topics == ["prison", "friendship", "hope"]
    assert rec.plot == "Two imprisoned men bond over years."
    assert rec.synopsis == "In 1947, Andy is convicted.\n\nYears later he escapes."
    assert rec.directors == ["Frank Darabont"]
    assert rec.writers == ["Stephen King", "Frank Darabont"]
    assert [(c.actor, c.characters, c.additional_texts) for c in rec.cast] == [
        ("Tim Robbins", ["Andy Dufresne"], []), ("Morgan Freeman", ["Ellis Boyd 'Red' Redding"], ["(voice)"])]
    assert rec.certificates == ["United Kingdom:15", "United Kingdom:12::(DVD rating)", "Germany:o.Al.",
                                "USA:TV-14::(TV rating)"]


def test_parse_imdb_title_pages_fill_what_the_row_lacks():
    rec = parse_imdb_title(INDEX, PLOT_OLD, GUIDE_MODERN, None)
    assert (rec.imdb_id, rec.title, rec.year, rec.runtime_min, rec.rating) == ("tt0111161", "The Shawshank Redemption", 1994, 142, 9.3)
    assert rec.genres == ["Drama"]
    assert rec.plot == "Old-layout summary." and rec.synopsis is None
    assert rec.certificates == ["South Korea:18", "South Korea:15::(re-rating)", "France:Tous publics"]


def test_parse_imdb_title_with_missing_pages():
    rec = parse_imdb_title("", "", "", {"tconst": "tt0000009", "primaryTitle": "Miss Jerry", "startYear": None})
    assert (rec.imdb_id, rec.title, rec.year, rec.plot, rec.synopsis) == ("tt0000009", "Miss Jerry", None, None, None)
    assert rec.certificates == [] and rec.cast == [] and rec.raw_sha256 is None
    no_summaries = parse_imdb_title(INDEX, "<html><body>nothing</body></html>", None, None)
    assert no_summaries.plot == LD["description"]  # JSON-LD description stands in
    assert parse_certificates("<p>No certification data available.</p>") == []
    with pytest.raises(ValueError):
        parse_imdb_title("<html></html>", "", "", None)


# --------------------------------------------------------------------------------------------
# The sample world parses back to its ground truth
# --------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def small_world(tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("srcworld") / "w"
    return out, generate(out, seed=11, n_films=20)


def test_sample_world_pages_parse_to_the_manifest(small_world):
    root, manifest = small_world
    basics = {r["tconst"]: r for r in read_title_basics(root / "imdb" / "title.basics.tsv").to_dicts()}
    ratings = {r["tconst"]: r for r in read_title_ratings(root / "imdb" / "title.ratings.tsv").to_dicts()}
    statuses = set()
    for f in manifest["films"]:
        kim = parse_kim((root / "kim" / f"{f['kim_id']}.html").read_text(), f"https://kids-in-mind.com/{f['kim_id']}.htm")
        assert (kim.kim_id, kim.url, kim.title, kim.year) == (f["kim_id"], f["kim_url"], f["title"], f["year"])
        assert kim.imdb_link == f["kim_imdb_link"]
        cid, status = canonical_imdb_id(kim.imdb_link)
        statuses.add(status)
        assert cid == f["imdb_id"]
        assert status == {"imdb_link_missing": "missing", "imdb_id_malformed": "malformed"}.get(f["expected_drop_reason"], "ok")
        assert kim.language_content.rating == f["kim_language_rating"]
        assert parse_kim_language_counts(kim.language_content.summary) == f["kim_language_counts"]
        assert kim.key_message
        if f["csm_id"]:
            csm = parse_csm((root / "csm" / f"{f['csm_id']}.html").read_text(), f"https://www.commonsensemedia.org/movie-reviews/{f['csm_id']}")
            assert (csm.title, csm.year, csm.age_suitability, csm.imdb_link) == (f["title"], f["year"], f["age_suitability"], f["csm_imdb_link"])
            assert csm.storyline and f["title"].upper() in csm.storyline
            assert (canonical_imdb_id(csm.imdb_link)[0] == f["true_imdb_id"]) == (f["expected_drop_reason"] != "csm_link_mismatch")
        tt = f["true_imdb_id"]
        pages = root / "imdb" / "title" / tt
        row = dict(basics[tt], **ratings[tt])
        rec = parse_imdb_title((pages / "index.html").read_text(), (pages / "plotsummary.html").read_text(),
                               (pages / "parentalguide.html").read_text(), row)
        assert (rec.imdb_id, rec.title, rec.year, rec.runtime_min) == (tt, f["title"], f["year"], f["runtime_min"])
        assert rec.genres == f["genres"] and rec.countries == f["countries"] and rec.languages == f["languages"]
        assert rec.certificates == f["certificates"]
        assert (rec.plot is not None, rec.synopsis is not None) == (f["has_plot"], f["has_synopsis"])
        assert rec.directors and rec.writers and len(rec.cast) >= 6 and all(c.characters for c in rec.cast)
    assert statuses == {"ok", "missing", "malformed"}
