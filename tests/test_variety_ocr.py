"""Offline OCR-text extractor (extractors.variety.ocr_grosses) and city normalisation
(extractors.variety.citymap): exact on clean text in the documented entry shape, plausible on the
real OCR pages, nothing dropped silently."""

from __future__ import annotations

from collections import Counter

import pytest

from extractors.variety.citymap import DEFAULT_CITYMAP, load_citymap, normalize_city
from extractors.variety.ocr_grosses import clean_title, extract_page, parse_money

CLEAN_PAGE = """Wednesday, March 7, 1934    PICTURE GROSSES    VARIETY 11
'Gone' Big $41,000 in Chi; 'Harbor' 25G
Chicago, March 6.
Loop houses are riding high this week with the holdovers strong.
Estimates for This Week
Chicago (B&K) (3,900; 35-75)—"Gone" (MG) (2d wk). Big $41,000. Last week, smash $52,500.
United Artists (B&K) (1,700; 35-65)—"Lady of the Harbor" (UA). Good 25G. Last week, "Loop Follies" (Ind), $14,000.
Roosevelt (B&K) (1,500; 25-55)—"Crimson Trail" (Par) and "Night Patrol" (RKO) (2d wk). Fair $9,500. Last week, $11,000.
Palace (RKO) (2,500; 25-65)—"Broadway Serenade" (WB). Thin $8,000. Last week, "Pagan Moon" (Ind), $12,500. Next week, "Sing Sailor Sing" (Fox).

San Francisco, March 6.
Estimates for This Week
Warfield (FWC) (2,700; 35-65)—"Gone" (MG). Strong $23,000. Last week, "Loop Follies" (Ind), $17,000.

Los Angeles, March 6.
Estimates for This Week
SHOWCASE (5 houses)—"Gone" (MG) (2d wk). Huge $88,000. Last week, $95,500.
"""

BROADWAY_PAGE = """PICTURES    VARIETY    Wednesday, June 2, 1926
Broadway
Grosses held up well along the street in spite of the heat.
Estimates for Last Week
Capitol (5,450; 50-$1.65)—"The Desert Sheikh" (MG). Big $58,000.
Rivoli (2,200; 35-99)—"Ranch of Dreams" (Par) and "Her Bargain Day" (FN). Off at $23,400.
"""

LEGIT_PAGE = """LEGITIMATE    VARIETY    Wednesday, March 7, 1934
Estimates for Last Week
"Dodsworth," Shubert (20th wk) (D-1,387; $3.30). Still capacity at $22,500.
"""


def _keys(tuples):
    return Counter((t.theater, t.city, t.movie, t.week, t.gross) for t in tuples)


def test_clean_page_in_the_documented_shape_is_exact():
    res = extract_page(CLEAN_PAGE, issue_date="1934-03-07", item_id="variety114-1934-03", page=2)
    expected = Counter({
        ("Chicago", "Chicago", "Gone", "this week", 41000): 1,
        ("Chicago", "Chicago", "Gone", "last week", 52500): 1,
        ("United Artists", "Chicago", "Lady of the Harbor", "this week", 25000): 1,
        ("United Artists", "Chicago", "Loop Follies", "last week", 14000): 1,
        ("Roosevelt", "Chicago", "Crimson Trail", "this week", 9500): 1,
        ("Roosevelt", "Chicago", "Night Patrol", "this week", 9500): 1,
        ("Roosevelt", "Chicago", "Crimson Trail", "last week", 11000): 1,
        ("Roosevelt", "Chicago", "Night Patrol", "last week", 11000): 1,
        ("Palace", "Chicago", "Broadway Serenade", "this week", 8000): 1,
        ("Palace", "Chicago", "Pagan Moon", "last week", 12500): 1,
        ("Palace", "Chicago", "Sing Sailor Sing", "next week", None): 1,
        ("Warfield", "San Francisco", "Gone", "this week", 23000): 1,
        ("Warfield", "San Francisco", "Loop Follies", "last week", 17000): 1,
        ("SHOWCASE:5", "Los Angeles", "Gone", "this week", 88000): 1,
        ("SHOWCASE:5", "Los Angeles", "Gone", "last week", 95500): 1,
    })
    assert _keys(res.tuples) == expected
    assert res.unparsed == [] and res.skipped is None
    t = res.tuples[0]
    assert (t.issue_date, t.item_id, t.page, t.extractor, t.model) == ("1934-03-07", "variety114-1934-03", 2,
                                                                        "ocr-rules", None)
    assert all(x.confidence == 1.0 for x in res.tuples)
    lines = CLEAN_PAGE.split("\n")
    for x in res.tuples:  # line numbers point at the entry
        assert x.theater.split(":")[0] in lines[x.line_no - 1]


def test_broadway_means_new_york_and_last_week_tables():
    res = extract_page(BROADWAY_PAGE)
    assert _keys(res.tuples) == Counter({
        ("Capitol", "New York", "The Desert Sheikh", "last week", 58000): 1,
        ("Rivoli", "New York", "Ranch of Dreams", "last week", 23400): 1,
        ("Rivoli", "New York", "Her Bargain Day", "last week", 23400): 1,
    })


def test_legitimate_pages_are_skipped():
    res = extract_page(LEGIT_PAGE)
    assert res.skipped == "legitimate_page" and res.tuples == []


def test_unparseable_entries_are_reported_with_reasons():
    text = ("Chicago, March 6.\nEstimates for This Week\n"
            "Apollo (B&K) (1,200; 50-85)—Stage show with Phil Spitalny band. Fair $7,000.\n"
            'Oriental (Iroquois) (3,200; 40-95)—"Bandit Man" (Col). Record !54:4,0004.\n'
            'Garrick (B&K) (900; 50-85)—"Lodger" (20th). Big $10,500. Last week, okay.\n')
    res = extract_page(text)
    reasons = [u.reason for u in res.unparsed]
    assert reasons == ["no_title", "bad_amount", "no_gross"]
    assert [u.line_no for u in res.unparsed] == [3, 4, 5]
    assert _keys(res.tuples) == Counter({("Garrick", "Chicago", "Lodger", "this week", 10500): 1})


def test_page_without_estimates_table_is_reported_not_silent():
    res = extract_page("VARIETY PICTURES\nThe Capitol did $45,411.80 with 'Beverly of Graustark'.")
    assert res.tuples == [] and [u.reason for u in res.unparsed] == ["no_estimates_block"]


@pytest.mark.parametrize("token, value, repaired", [
    ("$14,000", 14000, False), ("14G", 14000, False), ("$8,500", 8500, False), ("S17,- 000", 17000, True),
    ("$9,QQ0", 9000, True), ("$49,- 146.45", 49146, True), ("$45,411.80", 45411, False), ("$23,- 000", 23000, True),
    ("2.5G", 2500, False), ("$250", 250, False),
])
def test_parse_money(token, value, repaired):
    assert parse_money(token) == (value, repaired)


def test_parse_money_unreadable():
    assert parse_money("!54:4,0004")[0] is None
    assert parse_money("snug")[0] is None


def test_clean_title_joins_line_breaks_and_drops_debris():
    assert clean_title("Be- cause You're Mine") == ("Because You're Mine", False)
    assert clean_title("■Cat- tle Town•") == ("Cattle Town", True)


# --------------------------------------------------------------------------------------------
# real OCR pages
# --------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def real_results(realdata_dir):
    out = {}
    for p in sorted((realdata_dir / "variety_ocr").glob("*.txt")):
        out[p.stem] = extract_page(p.read_text(encoding="utf-8"), item_id=p.stem.rsplit("_", 1)[0],
                                   page=int(p.stem.rsplit("_", 1)[1]))
    return out


@pytest.mark.realdata
def test_real_pages_known_tuples(real_results):
    def has(stem, theater, city, movie, week, gross):
        return (theater, city, movie, week, gross) in _keys(real_results[stem].tuples)

    # checked by eye against the page text
    assert has("variety188-1952-10_0344", "Chicago", "Chicago", "Crimson Pirate", "this week", 25000)
    assert has("variety188-1952-10_0344", "Chicago", "Chicago", "Crimson Pirate", "last week", 38000)
    assert has("variety188-1952-12_0207", "Hollywood, Downtown, Wiltem", "Los Angeles", "Cattle Town", "this week", 11000)
    assert has("variety188-1952-12_0207", "Hollywood, Downtown, Wiltem", "Los Angeles", "Iron Mistress", "last week", 9300)
    assert has("variety163-1946-09_0127", "Belmont", "Los Angeles", "Holiday Mexico", "this week", 6000)
    assert has("variety163-1946-09_0127", "Belmont", "Los Angeles", "Holiday Mexico", "last week", 8300)
    assert has("variety153-1944-02_0166", "Apollo", "Chicago", "Mack London", "this week", 7000)
    assert has("variety153-1944-02_0166", "Apollo", "Chicago", "Mack London", "last week", 8000)
    # a shared gross, "S17,- 000" repaired: both films of the Palace bill get it
    palace = [t for t in real_results["variety153-1944-02_0166"].tuples if t.gross == 17000]
    assert sorted(t.movie for t in palace) == ["Hiniicr Higher", "Rookies Burma"]
    assert all(t.week == "this week" and t.city == "Chicago" and t.confidence < 1.0 for t in palace)
    # "First week was mild $12,000" is the previous week's gross, not this week's
    assert has("variety187-1952-09_0065", "Chinese, Globe, El Rey", "Los Angeles", "Park Row", "last week", 12000)


@pytest.mark.realdata
def test_real_pages_plausible_counts_and_nothing_silent(real_results):
    counts = {stem: len(r.tuples) for stem, r in real_results.items()}
    assert counts["variety153-1944-02_0166"] >= 10  # the full Chicago table
    for stem in ("variety163-1946-09_0127", "variety187-1952-09_0065", "variety188-1952-10_0344",
                 "variety188-1952-12_0207"):
        assert 2 <= counts[stem] <= 6, (stem, counts[stem])  # excerpts stop after one or two entries
    assert 20 <= sum(counts.values()) <= 40
    for stem, r in real_results.items():
        assert r.tuples or r.unparsed, stem  # every page says something
        for t in r.tuples:
            assert t.gross is None or 1000 <= t.gross <= 200000, t
            assert t.city in ("Chicago", "Los Angeles"), t
            assert t.item_id and t.page and t.extractor == "ocr-rules"
    # the 1926 prose reports have no estimates table: reported, not dropped silently
    assert all(real_results[s].unparsed[0].reason == "no_estimates_block"
               for s in real_results if s.startswith("variety82-"))
    # the unreadable "sturdy !54:4,0004" is reported
    assert "bad_amount" in [u.reason for u in real_results["variety153-1944-02_0166"].unparsed]


# --------------------------------------------------------------------------------------------
# cities
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("raw, expected", [
    ("Chicago", ("Chicago", "USA", "exact")),
    ("CHICAGO", ("Chicago", "USA", "exact")),
    ("St Louis", ("St. Louis", "USA", "exact")),
    ("Broadway", ("New York", "USA", "exact")),
    ("Hollywood", ("Los Angeles", "USA", "exact")),
    ("Montreal", ("Montreal", "Canada", "exact")),
    ("Chicago, Oct. 28.", ("Chicago", "USA", "folded")),
    ("Los Angeles. May 11. (Drawing Pop. 1,350,000)", ("Los Angeles", "USA", "folded")),
    ("Chicagb", ("Chicago", "USA", "fuzzy")),
    ("Detroil", ("Detroit", "USA", "fuzzy")),
    ("Springfield", (None, None, "city_unknown")),
    ("Columbia", (None, None, "city_unknown")),  # not Columbus
    ("Canton", (None, None, "city_unknown")),  # not Dayton
    ("", (None, None, "empty")),
])
def test_normalize_city_default_map(raw, expected):
    assert normalize_city(raw) == expected


def test_default_map_is_us_and_canada_facts_only():
    cmap = load_citymap()
    assert DEFAULT_CITYMAP.name == "citymap.csv"
    assert {c.country for c in cmap.values()} <= {"USA", "Canada", "UK"}
    assert all(c.normalized for c in cmap.values())


def test_citymap_requires_columns(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("name,country\nChicago,USA\n")
    with pytest.raises(ValueError, match="normalized"):
        load_citymap(bad)


@pytest.mark.realdata
def test_real_citymap_loads_and_normalises(realdata_dir):
    path = realdata_dir / "variety" / "citymap.csv"
    assert normalize_city("Portland (Ore.)", path) == ("Portland", "USA", "exact")
    assert normalize_city("Washington, D. C.", path) == ("Washington DC", "USA", "exact")
    assert normalize_city("Paris", path) == ("Paris", "France", "exact")
    assert normalize_city("Toronto", path)[1] == "Canada"
    assert normalize_city("Pittsburg", path)[0] == "Pittsburgh"
    assert normalize_city("Gotham", path) == (None, None, "city_unknown")
