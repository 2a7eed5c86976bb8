"""Kids-in-Mind and Common Sense Media as they really are (issue 16 points 2, 3, 7): the real KIM
index captures of ../shared/realdata/live/kim, the review-page and CSM shapes the MANIFEST reports,
pagination, and the sample world re-modelled on them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx
import pytest

from extractors.sources._html import parse_html
from extractors.sources.csm import csm_details, csm_index_url, parse_csm, parse_csm_index
from extractors.sources.kim import (
    KIM_LETTERS,
    display_title,
    kim_id_from_url,
    kim_index_urls,
    kim_runtime_minutes,
    parse_kim,
    parse_kim_index,
    parse_kim_language_counts,
)

# --------------------------------------------------------------------------------------------
# Kids-in-Mind index: the real captures
# --------------------------------------------------------------------------------------------
#: MANIFEST §1 "Per-letter entries": the number of regex matches (blank-line separated blocks)
MANIFEST_BLOCKS = {"i": 211, "o": 127, "q": 22, "u": 83, "x": 12, "z": 19}
#: entries the parser must read: the same, except that one block of the I page holds two entries
#: (the capture's regex ran on from "Illusionist, The (L'illusionniste) [2010]" — a foreign title
#: before the year — into the next entry, "I Love Trouble"), so I has 212
ENTRIES = dict(MANIFEST_BLOCKS, i=212)


def _capture(realdata_dir: Path, letter: str) -> str:
    return (realdata_dir / "live" / "kim" / f"kim_index_{letter}_2025-01-25_regexmatches.html").read_text(encoding="utf-8")


@pytest.mark.realdata
@pytest.mark.parametrize("letter", sorted(MANIFEST_BLOCKS))
def test_real_kim_index_pages_give_the_manifest_counts(realdata_dir, letter):
    html = _capture(realdata_dir, letter)
    body = html[html.index("Movie Reviews by Title"):]
    assert len(re.findall(r"\n\n<a ", body)) + 1 == MANIFEST_BLOCKS[letter]  # the MANIFEST's count
    entries = parse_kim_index(html, f"https://kids-in-mind.com/{letter}.htm")
    assert len(entries) == ENTRIES[letter]
    assert len({e.kim_id for e in entries}) == len(entries)
    for e in entries:  # every entry fully read, every review link in the letter's folder
        assert e.kim_id.startswith(f"{letter}/") and e.url == f"https://kids-in-mind.com/{e.kim_id}.htm"
        assert e.year and 1900 < e.year < 2030 and e.mpaa and None not in (e.sex, e.violence, e.language)
        assert all(0 <= n <= 10 for n in (e.sex, e.violence, e.language))
        assert not re.search(r"\[|\]|\d\.\d", e.title)
    # the sidebar (display titles, "- S.V.L") and the letter buttons are not entries
    sidebar = re.findall(r'href="(/[a-z]/[^"]+)"', html[:html.index("Movie Reviews by Title")])
    assert len(sidebar) == 35
    listed = {e.kim_id for e in entries}
    assert not any(kim_id_from_url(h) in listed for h in sidebar if h[1] != letter)
    assert not any(e.title in ("The Order", "Flight Risk") for e in entries)


@pytest.mark.realdata
def test_real_kim_index_entry_forms(realdata_dir):
    i = {e.kim_id: e for e in parse_kim_index(_capture(realdata_dir, "i"), "https://kids-in-mind.com/i.htm")}
    ill = i["i/illusionniste"]  # a foreign title before the year: brackets counted from the right
    assert (ill.title, ill.foreign_title, ill.year, ill.mpaa, ill.sex, ill.violence, ill.language) == (
        "Illusionist, The", "L\u2019illusionniste", 2010, "PG", 1, 2, 0)
    assert ill.display_title == "The Illusionist"
    assert i["i/i_love_trouble_1994__342"].year == 1994  # the entry the capture's regex swallowed
    q = {e.kim_id: e for e in parse_kim_index(_capture(realdata_dir, "q"), "https://kids-in-mind.com/q.htm")}
    # the four slug styles, leading-article sort titles, entities
    assert (q["q/quills_2000"].sex, q["q/quills_2000"].violence, q["q/quills_2000"].language) == (10, 10, 7)
    assert q["q/quest_1996__065"].title == "Quest, The"
    assert q["q/quarry-parents-guide-movie-review-rating"].display_title == "The Quarry"
    assert q["q/queen-slim-parents-guide-movie-review-rating"].title == "Queen & Slim"
    assert q["q/quiet-place-day-one-parents-guide-movie-review-rating"].display_title == "A Quiet Place: Day One"
    # a replay of the capture on loopback: the entries point at the replay, not the real host
    for root in ("http://127.0.0.1:8000", "http://127.0.0.1:8000/kim"):  # at the host root or under a prefix
        replay = parse_kim_index(_capture(realdata_dir, "x"), f"{root}/x.htm")
        assert len(replay) == 12 and all(e.url.startswith(f"{root}/x/") for e in replay)


# --------------------------------------------------------------------------------------------
# Kids-in-Mind index: every entry form
# --------------------------------------------------------------------------------------------
INDEX = """<html><body>
<div class="et_pb_module et_pb_code et_pb_code_1 sidebar"><div class="et_pb_code_inner">
<a href="/o/order-parents-guide-movie-review-rating.htm" rel="noopener">The Order</a> - 4.7.10<br/>
<a href="/b/babel.htm" rel="noopener">Babel</a> - 8.7.6<br/></div></div>
<div class="et_pb_button_module_wrapper"><a class="et_pb_button et_pb_bg_layout_dark" href="/b.htm">B</a></div>
<div class="et_pb_text_inner">Movie Reviews by Title | B</div>
<div class="et_pb_text_inner">
<a href="/b/babel.htm" rel="noopener noreferrer" target="_blank">Babel</a> [2006] [R] \u2013 8.7.6<br>
<a href="https://kids-in-mind.com/b/babe_1995__021.htm" rel="noopener">Babe</a> [1995] [G] - 0.1.1<br>
<a href="/b/baby_boy_2001.htm">Baby Boy</a> [Bébé] [2001] [R] \u2013 7.7.10<br>
<a href="b/big-parents-guide-movie-review-rating-2017.htm">Big, The</a> [2017] [PG 13] - 1.2.3<br>
<a href="/b/babel.htm">Babel</a> [2006] [R] \u2013 8.7.6<br>
<a href="/b/bolt.htm">Bolt [2008] [PG] - 0.3.1</a><br>
<a href="/donate.htm">donate</a>
</div></body></html>"""


def test_kim_index_entry_forms_and_exclusions():
    entries = parse_kim_index(INDEX, "https://kids-in-mind.com/b.htm")
    got = [(e.kim_id, e.title, e.foreign_title, e.year, e.mpaa, e.sex, e.violence, e.language) for e in entries]
    assert got == [
        ("b/babel", "Babel", None, 2006, "R", 8, 7, 6),  # en dash
        ("b/babe_1995__021", "Babe", None, 1995, "G", 0, 1, 1),  # hyphen, absolute link
        ("b/baby_boy_2001", "Baby Boy", "Bébé", 2001, "R", 7, 7, 10),  # bracketed foreign title
        ("b/big-parents-guide-movie-review-rating-2017", "Big, The", None, 2017, "PG 13", 1, 2, 3),
        ("b/bolt", "Bolt", None, 2008, "PG", 0, 3, 1),  # everything inside the anchor
    ]  # the sidebar's "The Order", the letter button, the duplicate Babel and donate.htm are not entries
    assert [e.url for e in entries][:2] == ["https://kids-in-mind.com/b/babel.htm", "https://kids-in-mind.com/b/babe_1995__021.htm"]
    assert display_title("Big, The") == "The Big" and display_title("Babel") == "Babel"
    # another markup (no "Movie Reviews by Title" header): only "[YYYY]" entries count, not the sidebar
    bare = INDEX.replace("Movie Reviews by Title | B", "Reviews")
    assert [e.kim_id for e in parse_kim_index(bare, "https://kids-in-mind.com/b.htm")] == [g[0] for g in got]
    assert parse_kim_index("", "https://kids-in-mind.com/b.htm") == []


def test_kim_urls_and_ids():
    urls = kim_index_urls("https://kids-in-mind.com/")
    assert len(urls) == 26 == len(KIM_LETTERS) and urls[0] == "https://kids-in-mind.com/a.htm" and urls[-1].endswith("/z.htm")
    assert kim_id_from_url("https://kids-in-mind.com/b/babydriver.htm") == "b/babydriver"
    assert kim_id_from_url("http://127.0.0.1:9/kim/o/order-parents-guide-movie-review-rating.htm") == \
        "o/order-parents-guide-movie-review-rating"
    assert kim_id_from_url("https://kids-in-mind.com/a/ace_ventura_when_nature_calls_.htm") == "a/ace_ventura_when_nature_calls_"
    assert kim_id_from_url("https://kids-in-mind.com/oldpage.htm") == "oldpage"


# --------------------------------------------------------------------------------------------
# Kids-in-Mind review page (MANIFEST "Review page text" / "Review page markup")
# --------------------------------------------------------------------------------------------
def _review(blocks: str) -> str:
    return f"""<!DOCTYPE html><html><head><title>State of Play [2009] [PG-13] - 4.6.5</title></head><body>
<div class="et_pb_text_inner"><p>Movie Ratings That Actually Work</p><p>Become a Member</p></div>
<div class="et_pb_text_inner"><h1>State of Play | 2009 | PG-13 | - 4.6.5</h1></div>
<div class="et_pb_text_inner"><p>A journalist (Russell Crowe) investigates a murder. Directed by Kevin Macdonald. [2:07]</p></div>
<p><a href="https://www.imdb.com/title/tt0473705/?ref_=x">the film on the database</a></p>
{blocks}
</body></html>"""


LANG = ("25 F-words and its derivatives, 3 scatological terms, 5 anatomical terms, 9 mild obscenities, "
        "name-calling (stupid), 14 religious exclamations.")
H2_BLOCKS = f"""<div class="et_pb_text_inner"><h2>SEX/NUDITY 4</h2><p> - A man and a woman kiss.<br> Later they talk.</p></div>
<div class="et_pb_text_inner"><h2>VIOLENCE/GORE 6</h2><p>A man is shot.</p></div>
<div class="et_pb_text_inner"><h2>LANGUAGE 5</h2><p>{LANG}</p></div>
<div class="et_pb_text_inner"><h2>SUBSTANCE USE</h2><p>People drink.</p></div>
<div class="et_pb_text_inner"><h2>DISCUSSION TOPICS</h2><p>Journalism, ethics.</p></div>
<div class="et_pb_text_inner"><h2>MESSAGE</h2><p>The truth matters.</p></div>"""
ID_BLOCKS = f"""<div class="et_pb_text_inner"><h2 id="sex">SEX/NUDITY 4</h2><p>A man and a woman kiss.</p>
<h2 id="violence">VIOLENCE/GORE 6</h2><p>A man is shot.</p><h2 id="language">LANGUAGE 5</h2><p>{LANG}</p>
<h2 id="message">MESSAGE</h2><p>The truth matters.</p></div>"""
SPAN_BLOCKS = f"""<div class="et_pb_text_inner"><p><span style="font-weight:bold">SEX/NUDITY 4</span></p><p>A man and a woman kiss.</p></div>
<div class="et_pb_text_inner"><span>LANGUAGE 5</span><p>{LANG}</p></div>
<div class="et_pb_text_inner"><span>MESSAGE</span><p>The truth matters.</p></div>"""


@pytest.mark.parametrize("blocks", [H2_BLOCKS, ID_BLOCKS, SPAN_BLOCKS], ids=["h2", "h2-id", "span"])
def test_parse_kim_real_review_markup(blocks):
    html = _review(blocks)
    rec = parse_kim(html, "https://kids-in-mind.com/s/stateofplay.htm")
    assert (rec.kim_id, rec.url, rec.title, rec.year) == ("s/stateofplay", "https://kids-in-mind.com/s/stateofplay.htm",
                                                          "State of Play", 2009)
    assert rec.imdb_link == "https://www.imdb.com/title/tt0473705/?ref_=x"  # any href to imdb…/title/tt
    assert rec.language_content.rating == 5  # the L of the header's S.V.L
    assert rec.language_content.summary == LANG
    assert rec.key_message == "The truth matters."
    assert parse_kim_language_counts(rec.language_content.summary) == {
        "f_words": 25, "scatological": 3, "anatomical": 5, "mild": 9, "religious": 14}
    assert kim_runtime_minutes(html) == 127


def test_parse_kim_scores_come_from_the_header_then_the_title():
    no_header = _review(H2_BLOCKS).replace("<h1>State of Play | 2009 | PG-13 | - 4.6.5</h1>", "")
    no_header = no_header.replace("<h2>LANGUAGE 5</h2>", "<h2>LANGUAGE 7</h2>")
    rec = parse_kim(no_header, "https://kids-in-mind.com/s/stateofplay.htm")
    assert (rec.title, rec.year, rec.language_content.rating) == ("State of Play", 2009, 5)  # from <title>
    bare = no_header.replace("[PG-13] - 4.6.5", "[PG-13]")
    assert parse_kim(bare, "https://kids-in-mind.com/s/x.htm").language_content.rating == 7  # the block's score
    assert parse_kim_language_counts("1 F-word, 1 scatological term, 1 mild obscenity") == {
        "f_words": 1, "scatological": 1, "anatomical": 0, "mild": 1, "religious": 0}


# --------------------------------------------------------------------------------------------
# Common Sense Media review pages: the three layouts of MANIFEST §2
# --------------------------------------------------------------------------------------------
CSM_A = """<html><head><title>State of Play Movie Review | Common Sense Media</title></head><body>
<h1>State of Play</h1><p>Smart, well-acted thriller.</p><p>Parents recommend</p>
<ul><li>Rated: PG-13</li><li>Genre: Drama</li><li>Release Year: 2009</li><li>Running Time: 132 minutes</li></ul>
<div class="age">age 13+</div><h2>What parents need to know</h2><p>Positive messages ...</p>
<h2>What's the story?</h2><p>A reporter digs into a death.</p><h2>Is it any good?</h2><p>Yes.</p>
<a href="http://www.imdb.com/title/tt0473705/">IMDb</a></body></html>"""
CSM_B = """<html><head><title>State of Play Movie Review | Common Sense Media</title></head><body>
<h1>State of Play</h1><p>Movie review by Jane Roe, Common Sense Media</p>
<ul><li>PG-13</li><li>2009</li><li>132 minutes</li></ul>
<div>Parents say <span>age 14+</span> Based on 9 reviews</div><div>Kids say age 12+ Based on 7 reviews</div>
<div>age 13+</div>
<section><h2>A lot or a little?</h2><p>Positive Messages</p></section>
<section><h2>What's the story?</h2><p>A reporter digs into a death.</p></section></body></html>"""
CSM_C = """<html><head><title>Thirteen Movie Review | Common Sense Media</title>
<script type="application/ld+json">{"@context": "https://schema.org", "@type": "Review",
 "itemReviewed": {"@type": "Movie", "name": "Thirteen", "sameAs": ["https://www.wikidata.org/wiki/Q1", "https://www.imdb.com/title/tt0328538/"]},
 "reviewBody": "Mature, disturbing drama.", "datePublished": "2003-08-20"}</script></head><body>
<h1>Parents' Guide to<br>Thirteen</h1><p>By John Doe, Common Sense Media Reviewer</p>
<p>age 17+</p><p>Mature, disturbing drama.</p><ul><li>Movie</li><li>R</li><li>2003</li><li>100 minutes</li></ul>
<div><h2>A Lot or a Little?</h2><p>...</p><h2>Community Reviews</h2><p>age 14+</p><p>Based on 20 parent reviews</p>
<h2>Is It Any Good?</h2><p>Our review: strong.</p><h3>What's the Story?</h3><p>Tracy, 13, falls in with Evie.</p>
<h3>Parents say (20):</h3><p>age 15+</p></div></body></html>"""


@pytest.mark.parametrize("html, want", [
    (CSM_A, ("State of Play", 2009, "13+", "http://www.imdb.com/title/tt0473705/", "A reporter digs into a death.", "PG-13", 132)),
    (CSM_B, ("State of Play", 2009, "13+", None, "A reporter digs into a death.", "PG-13", 132)),
    (CSM_C, ("Thirteen", 2003, "17+", "https://www.imdb.com/title/tt0328538/", "Tracy, 13, falls in with Evie.", "R", 100)),
], ids=["A", "B", "C"])
def test_parse_csm_layouts(html, want):
    rec = parse_csm(html, "https://www.commonsensemedia.org/movie-reviews/x")
    details = csm_details(parse_html(html).text())
    assert (rec.title, rec.year, rec.age_suitability, rec.imdb_link, rec.storyline,
            details.mpa_rating, details.runtime_min) == want


def test_csm_age_never_takes_the_parents_or_kids_age():
    only_users = CSM_B.replace("<div>age 13+</div>", "")
    assert parse_csm(only_users, "https://www.commonsensemedia.org/movie-reviews/x").age_suitability is None
    span = CSM_B.replace("<div>Parents say", '<span class="rating__age">age 11+</span><div>Parents say')
    assert parse_csm(span, "https://www.commonsensemedia.org/movie-reviews/x").age_suitability == "11+"


def test_csm_imdb_link_from_json_ld_same_as_string():
    ld = {"@context": "https://schema.org", "@graph": [{"@type": "Review", "itemReviewed": {
        "@type": "Movie", "name": "Thirteen", "sameAs": "https://www.imdb.com/title/tt0328538/"}}]}
    html = f'<html><head><script type="application/ld+json">{json.dumps(ld)}</script></head><body><h1>Thirteen</h1></body></html>'
    rec = parse_csm(html, "https://www.commonsensemedia.org/movie-reviews/thirteen")
    assert rec.imdb_link == "https://www.imdb.com/title/tt0328538/" and rec.csm_id == "thirteen"
    broken = '<script type="application/ld+json">{not json</script><h1>X</h1>'
    assert parse_csm(broken, "https://www.commonsensemedia.org/movie-reviews/x").imdb_link is None


# --------------------------------------------------------------------------------------------
# Common Sense Media index pagination
# --------------------------------------------------------------------------------------------
ROOT = "https://www.commonsensemedia.org"


def _index(links: str, head: str = "") -> str:
    return (f'<html><head>{head}</head><body><a href="/movie-reviews/thirteen">Thirteen</a>'
            f'<a href="https://www.commonsensemedia.org/movie-reviews/state-of-play/">State</a>'
            f'<a href="/movie-reviews/thirteen">again</a><a href="/tv-reviews/bluey">tv</a>'
            f'<a href="/movie-reviews/thirteen/user-reviews/adult">users</a><a href="/search/x">s</a>{links}</body></html>')


@pytest.mark.parametrize("url, html, nxt", [
    (f"{ROOT}/movie-reviews", _index('<a href="?page=1" rel="next">›</a>'), f"{ROOT}/movie-reviews?page=1"),
    (f"{ROOT}/movie-reviews", _index("", '<link rel="next" href="/movie-reviews?page=1">'), f"{ROOT}/movie-reviews?page=1"),
    (f"{ROOT}/movie-reviews?page=1", _index('<a href="/movie-reviews?page=0">1</a><a href="/movie-reviews?page=2">Next page</a>'),
     f"{ROOT}/movie-reviews?page=2"),
    (f"{ROOT}/movie-reviews?page=1", _index('<a href="?page=0">1</a><a href="?page=3">4</a><a href="?page=2">3</a>'),
     f"{ROOT}/movie-reviews?page=2"),
    (f"{ROOT}/movie-reviews?page=3", _index('<a href="?page=0">1</a><a href="?page=2">3</a>'), None),
], ids=["rel-next", "link-rel-next", "pager-next-text", "numbered", "last"])
def test_csm_index_pagination(url, html, nxt):
    page = parse_csm_index(html, url)
    assert page.review_urls == [f"{ROOT}/movie-reviews/thirteen", f"{ROOT}/movie-reviews/state-of-play"]
    assert page.next_url == nxt
    assert csm_index_url(ROOT + "/") == f"{ROOT}/movie-reviews"


# --------------------------------------------------------------------------------------------
# The sample world on the real shapes
# --------------------------------------------------------------------------------------------
def test_sample_kim_letter_pages_list_every_film_once(world, manifest):
    films = {f["kim_id"]: f for f in manifest["films"]}
    listed = {}
    for letter in KIM_LETTERS:
        page = world / "kim_index" / f"{letter}.htm"
        entries = parse_kim_index(page.read_text(encoding="utf-8"), f"http://127.0.0.1:1/kim/{letter}.htm")
        for e in entries:
            assert e.kim_id not in listed and e.kim_id.startswith(letter + "/")
            listed[e.kim_id] = e
    assert set(listed) == set(films)  # the sidebar on every page adds nothing
    for kim_id, e in listed.items():
        f = films[kim_id]
        assert (e.display_title, e.year, e.language) == (f["title"], f["year"], f["kim_language_rating"])
        assert (world / "kim" / f"{kim_id}.html").is_file()
        sort = f["title"].split(" ", 1)[1] if re.match(r"(The|A|An) ", f["title"]) else f["title"]
        assert kim_id[0] == sort[0].lower()  # the folder is the sort title's first letter
    styles = {("parents-guide" in k) + 2 * bool(re.search(r"_\d{4}__\d{3}$", k)) for k in films}
    assert styles == {0, 1, 2}  # squashed, -parents-guide-movie-review-rating, title_YYYY__NNN


def test_sample_csm_pages_use_layouts_b_and_c_and_json_ld_only_links(world, manifest):
    pages = [(world / "csm" / f"{f['csm_id']}.html").read_text(encoding="utf-8") for f in manifest["films"] if f["csm_id"]]
    assert any("Parents' Guide to" in p and "rating__age" in p for p in pages)  # C
    assert any("Parents say" in p and "rating__age" not in p for p in pages)  # B
    ld_only = [p for p in pages if '"sameAs"' in p and 'href="https://www.imdb.com' not in p
               and 'href="http://www.imdb.com' not in p]
    assert ld_only


def test_sample_csm_index_is_paginated(world, manifest):
    from fixtures.pages_server import CSM_PAGE_SIZE, PagesFixture

    want = sorted(f["csm_id"] for f in manifest["films"] if f["csm_id"])
    assert len(want) > CSM_PAGE_SIZE
    with PagesFixture(world) as srv:
        url, got, pages = csm_index_url(srv.base_urls["csm"]), [], 0
        while url:
            page = parse_csm_index(httpx.get(url).text, url)
            got += page.review_urls
            url, pages = page.next_url, pages + 1
        assert httpx.get(f"{srv.base_url}/kim/index.htm").status_code == 404
    assert pages == -(-len(want) // CSM_PAGE_SIZE)
    assert [u.rsplit("/", 1)[1] for u in got] == want
