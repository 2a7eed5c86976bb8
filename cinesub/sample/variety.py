"""A deterministic synthetic *Variety* world (issue 9): monthly Internet Archive items of weekly
issues, with grosses pages rendered to page images, noisy OCR text, gold tuples, an IMDb-like
catalog and IA film items, so the whole public-domain flow runs offline (SPEC B1, B2).

``generate_variety_world(out_dir, seed) -> manifest`` writes (everything a pure function of
``seed``; a second run writes byte-identical files)::

    out_dir/
      manifest.json                         the returned manifest (below)
      catalog.tsv                           IMDb-like catalog: imdb, title, year, votes (tab-separated)
      ia/<identifier>/                      one Internet Archive item per directory (served by
                                            fixtures/ia_server.py)
          _item.json                        the item's ``metadata`` dict as the metadata API returns it
          <identifier>_hocr_searchtext.txt.gz  (Variety items) OCR text of every leaf concatenated, with
                                            planted OCR noise, and ``_hocr_pageindex.json.gz`` (one
                                            ``[start, end, 0, 0]`` character range per leaf), as IA's
                                            archive-hocr-tools write them
          <identifier>_djvu.txt             the same text, pages not marked (real IA has no form feed)
          <identifier>_page_numbers.json    ``pages[{leafNum, pageNumber, confidence}]``
          <identifier>_scandata.xml         ``pageData/page[@leafNum]`` with ``addToAccessFormats``
          <identifier>_jp2.zip              (Variety items) one lossless JPEG 2000 image per leaf:
                                            ``<identifier>_jp2/<identifier>_<leaf:04d>.jp2``
          <identifier>_meta.xml             (film items) a small IA-style metadata file
      pages/<identifier>/<leaf:04d>.png     the same page images as PNG (what a client sends to Gemini)
      gold/<identifier>/<leaf:04d>.json     per page: {item_id, issue_date, page, kind, text (the clean
                                            printed text), tuples[{theater, city, movie, week, gross}]}

Variety items follow the real scheme ``variety{VOL}-{YYYY}-{MM}`` (one item per month, several
weekly issues; ``collection: mediahistory``). Leaf 0 is the MHDL colophon page. Page kinds:
``colophon``, ``news`` (no grosses), ``grosses`` (city datelines, "Estimates for This Week" /
"Estimates for Last Week" blocks in the entry shape ``Theatre (Circuit) (seats; prices)—"Title"
(Dist) (2d wk). Adjective $gross. Last week, $gross.``, a SHOWCASE entry, a gross shared by two
films at one theater, "Next week" announcements), ``broadway`` (city New York), ``legitimate``
(stage shows: no film tuples) and ``vaudeville`` (a table: no tuples).

Gold tuple rules (what the Gemini examples teach, SPEC B1): ``movie`` verbatim as printed (an
alias such as "Gone"); ``city`` from the dateline, "Broadway" → "New York"; a shared gross is
reported for each film; SHOWCASE entries get theater ``SHOWCASE:N``; "Last week, $X" after a
holdover ``(Nd wk)`` belongs to the same film, after a new film the entry names the previous film;
"Next week" gives a tuple with ``gross: null``; LEGITIMATE pages, tables and vaudeville give none.

Film items (``mediatype: movies``, ``sound: sound|silent``) make the collection's "sound film on
the Internet Archive" test answerable. :data:`FILMS` is shared with :mod:`cinesub.sample.cce`,
which plants the copyright side for the same films.

The manifest records: items (identifier, year, issues, per page: leaf, issue date, kind, gold
count, ``png_sha256``, ``pixel_sha256``), films, the alias map per year (alias → imdb; "Gone"
appears ≥ 3 times in 1934), every planted OCR noise (page, clean → noisy), the Gemini fixture's
planted errors (``gemini_planted_errors``: a dropped tuple, a wrong gross, a swapped week) and the
expected top-100 membership per year.
"""

from __future__ import annotations

import json
import random
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cinesub.sample.ocr_noise import OCR_NOISE_PLAN, ocr_noise  # noqa: F401  (planted OCR errors)
from cinesub.sample.scans import (
    film_meta_xml,
    jp2_bytes,
    page_derivatives,
    pixel_sha256,
    png_bytes,
    render_page,
    scoped_rng,
    sha256_hex,
    write_item,
    write_zip,
)

GENERATOR_VERSION = "1.3"  # 1.1: Winter Orchard (source works); 1.2: hOCR page index, scan data, no form feeds;
#                             1.3: two unregistered 1926 sound films (R1_release_date; one without sound metadata)
DEFAULT_SEED = 1934

# --------------------------------------------------------------------------------------------
# Films (shared with cinesub.sample.cce)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class VFilm:
    key: str
    imdb: str
    title: str
    year: int
    dist: str
    sound: bool
    votes: int
    #: Variety's forms of the title (first = the usual one); all map to ``imdb`` in that year
    aliases: tuple[str, ...]
    #: IA film item identifier, or None when the film is not on the Internet Archive
    ia_identifier: str | None
    #: False: the IA film item's metadata has no ``sound`` value (the collection cannot tell: needs_review)
    sound_metadata: bool = True


FILMS: tuple[VFilm, ...] = (
    VFilm("gone", "tt9100001", "Gone with the Tempest", 1934, "Apex", True, 5120, ("Gone",), "GoneWithTheTempest1934"),
    VFilm("midnight", "tt9100002", "The Midnight Express", 1934, "Par", True, 3310, ("Midnight Express",),
          "TheMidnightExpress1934"),
    VFilm("lady", "tt9100003", "Lady of the Harbor", 1934, "UA", True, 2210, ("Lady of the Harbor", "Lady of Harbor"),
          "LadyOfTheHarbor1934"),
    VFilm("crimson", "tt9100004", "Crimson Trail", 1934, "Par", True, 1200, ("Crimson Trail",), "CrimsonTrail1934"),
    VFilm("patrol", "tt9100005", "Night Patrol", 1934, "Col", True, 860, ("Night Patrol",), None),
    VFilm("serenade", "tt9100006", "Broadway Serenade of 1934", 1934, "M-G", True, 2950, ("Broadway Serenade",),
          "BroadwaySerenadeOf1934"),
    VFilm("bondage", "tt9100007", "Hearts in Bondage", 1934, "WB", True, 1010, ("Hearts in Bondage",),
          "HeartsInBondage1934"),
    VFilm("sailor", "tt9100008", "Sing, Sailor, Sing", 1934, "Fox", True, 1430, ("Sing Sailor Sing",),
          "SingSailorSing1934"),
    VFilm("orchard", "tt9100009", "Winter Orchard", 1934, "RKO", True, 1580, ("Winter Orchard",), "WinterOrchard1934"),
    VFilm("sheikh", "tt9000001", "The Desert Sheikh", 1926, "Par", False, 1900, ("Desert Sheikh",), "TheDesertSheikh1926"),
    VFilm("ranch", "tt9000002", "Ranch of Dreams", 1926, "FN", False, 640, ("Ranch of Dreams",), None),
    VFilm("bargain", "tt9000003", "Her Bargain Day", 1926, "M-G", False, 720, ("Her Bargain Day",), "HerBargainDay1926"),
    # never registered (no CCE entry), released before the 95-year line: public domain by rule
    # R1_release_date; a sound film on IA → in the collection
    VFilm("canary", "tt9000004", "The Talking Canary", 1926, "WB", True, 410, ("Talking Canary",),
          "TheTalkingCanary1926"),
    # the same, but its IA item says nothing about sound: needs_review (sound:unknown), never dropped
    VFilm("cavalcade", "tt9000005", "Jazz Cavalcade", 1926, "FN", True, 380, ("Jazz Cavalcade",),
          "JazzCavalcade1926", sound_metadata=False),
)
FILM_BY_KEY: dict[str, VFilm] = {f.key: f for f in FILMS}

#: catalog distractors: namesakes of other years and near titles (popularity must not win alone)
CATALOG_EXTRA: tuple[tuple[str, str, int, int], ...] = (
    ("tt9200001", "Gone with the Tempest", 1951, 9800),
    ("tt9200002", "Midnight Express", 1978, 88000),
    ("tt9200003", "Lady of the Harbour Lights", 1933, 310),
    ("tt9200004", "Crimson Trail West", 1935, 150),
    ("tt9200005", "Broadway Serenade", 1939, 2400),
    ("tt9200006", "The Desert Sheik", 1931, 400),
    ("tt9200007", "Night Patrol", 1984, 5200),
)

#: movies printed in Variety that are not in the catalog (stay unmapped: lower-cased title)
UNMAPPED: tuple[tuple[str, str], ...] = (("Loop Follies", "Ind"), ("Pagan Moon", "Ind"))

# --------------------------------------------------------------------------------------------
# Issues and theaters
# --------------------------------------------------------------------------------------------
ITEMS: tuple[dict[str, Any], ...] = (
    {"identifier": "variety83-1926-06", "volume": 83, "year": 1926, "month": 6, "title": "Variety (June 1926)",
     "issues": ("1926-06-02",)},
    {"identifier": "variety114-1934-03", "volume": 114, "year": 1934, "month": 3, "title": "Variety (March 1934)",
     "issues": ("1934-03-07", "1934-03-14")},
)

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
MON_ABBR = ("Jan.", "Feb.", "March", "April", "May", "June", "July", "Aug.", "Sept.", "Oct.", "Nov.", "Dec.")
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")

# (theater, circuit or None, seats, prices)
THEATERS: dict[str, list[tuple[str, str | None, str, str]]] = {
    "Chicago": [("Chicago", "B&K", "3,900", "35-75"), ("United Artists", "B&K", "1,700", "35-75"),
                ("Roosevelt", "B&K", "1,500", "25-55"), ("Palace", "RKO", "2,500", "25-75")],
    "San Francisco": [("Fox", "WC", "4,600", "25-65"), ("Warfield", "WC", "2,700", "25-55")],
    "Los Angeles": [("Chinese", "FWC", "2,028", "40-$1.10"), ("State", "Loew-FWC", "2,024", "25-55")],
    "Boston": [("Keith Memorial", "RKO", "2,900", "25-65"), ("Metropolitan", "Publix", "4,350", "30-65")],
    "Kansas City": [("Mainstreet", "RKO", "3,100", "25-40"), ("Newman", "Publix", "1,800", "25-40")],
    "Montreal": [("Palace", "CT", "2,700", "50"), ("Capitol", "CT", "2,700", "50")],
    "Minneapolis": [("Minnesota", "Publix", "4,200", "25-55"), ("State", "Publix", "2,300", "25-40")],
    "New York": [("Capitol", None, "4,620", "35-$1.65"), ("Paramount", None, "3,664", "35-99"),
                 ("Roxy", None, "6,200", "25-55"), ("Music Hall", None, "5,945", "35-$1.65"),
                 ("Rialto", None, "2,035", "25-65"), ("Strand", None, "2,900", "25-75"),
                 ("Mayfair", None, "2,300", "35-85")],
}
ADJECTIVES = ("Big", "Good", "Fair", "Weak", "Strong", "Okay", "Neat", "Thin", "Sturdy", "Mild", "Nice", "Smart",
              "Hefty", "Slim", "Stout", "Lean", "Solid", "Fine")
LEADS = {
    "Chicago": "Loop houses had a fair session with the weather turning mild and no big newcomer in town.",
    "San Francisco": "Market street held up well this week on the strength of two holdovers.",
    "Los Angeles": "Town is spotty with the downtown houses off and the showcase run doing the business.",
    "Boston": "Hub grosses are on the upgrade with Lent ahead of the town.",
    "Kansas City": "Business is steady in all spots but nothing is breaking records.",
    "Montreal": "Hockey playoffs are keeping the customers away from the main stem.",
    "Minneapolis": "Loop had a fair week with the cold spell keeping the trade at home.",
    "New York": "Broadway is in for a better week with three new pictures coming in on Friday.",
}

PROSE = (
    "Film salesmen on the coast report that the exchanges are booking heavier for the spring season, "
    "with the circuits asking for more first-run product than the studios have on the shelves.",
    "The new ruling on double features is expected to come up for a vote at the next meeting of the "
    "exhibitor unit in the middle west, where the single bill still has many friends.",
    "Radio tie-ups for the key city openings are being tried out by three of the majors this month.",
    "Vaudeville units playing the picture houses will be cut to four acts under the new booking plan.",
)

COLOPHON = ("Scanned from the collection of\nThe Library of Congress\nPackard Campus\nfor Audio Visual Conservation\n\n"
            "Coordinated by the\nMedia History Digital Library\nwww.mediahistoryproject.org\n\n"
            "Digitized by the Internet Archive\nin 2011 with funding from\nMedia History Digital Library\n\n"
            "http://www.archive.org/details/{identifier}")

# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


def money(n: int) -> str:
    return f"${n:,}"


def _g(n: int) -> str:
    """Headline form: 14000 → 14G."""
    return f"{round(n / 1000)}G"


def _date_line(iso: str) -> str:
    import datetime as _dt

    d = _dt.date.fromisoformat(iso)
    return f"{WEEKDAYS[d.weekday()]}, {MONTHS[d.month - 1]} {d.day}, {d.year}"


def _dateline(city: str, iso: str) -> str:
    import datetime as _dt

    d = _dt.date.fromisoformat(iso) - _dt.timedelta(days=1)
    return f"{city}, {MON_ABBR[d.month - 1]} {d.day}."


def _ordinal_wk(n: int) -> str:
    return {2: "2d", 3: "3d"}.get(n, f"{n}th")


# --------------------------------------------------------------------------------------------
# Entries and pages
# --------------------------------------------------------------------------------------------


@dataclass
class Entry:
    text: str
    tuples: list[dict[str, Any]]
    headline: tuple[str, int] | None = None  # (alias, this-week gross) for the headline


@dataclass
class Page:
    kind: str
    issue_date: str
    lines: list[str]
    tuples: list[dict[str, Any]] = field(default_factory=list)
    head_lines: int = 1


def _t(theater: str, city: str, movie: str, week: str, gross: int | None) -> dict[str, Any]:
    return {"theater": theater, "city": city, "movie": movie, "week": week, "gross": gross}


def _round_gross(rng: random.Random, lo: int, hi: int) -> int:
    return rng.randrange(lo // 500, hi // 500) * 500


def _entry(rng: random.Random, city: str, theater: tuple[str, str | None, str, str], films: list[tuple[str, str]],
           *, week_no: int, style: str, prev: tuple[str, str] | None = None,
           next_film: tuple[str, str] | None = None, showcase: int | None = None) -> Entry:
    """One grosses entry. ``films``: (alias, dist) pairs (two → a shared gross); ``style``:
    ``this`` (Estimates for This Week) or ``last`` (Estimates for Last Week)."""
    name, circuit, seats, prices = theater
    tname = f"SHOWCASE:{showcase}" if showcase else name
    if showcase:
        head = f"SHOWCASE ({showcase} houses)"
    else:
        head = f"{name} ({circuit}) ({seats}; {prices})" if circuit else f"{name} ({seats}; {prices})"
    bill = " and ".join(f'"{a}" ({d})' for a, d in films)
    wk = f" ({_ordinal_wk(week_no)} wk)" if week_no > 1 else ""
    adj = rng.choice(ADJECTIVES)
    this = _round_gross(rng, 6000, 60000) if not showcase else _round_gross(rng, 40000, 90000)
    tuples: list[dict[str, Any]] = []
    if style == "last":
        text = f"{head}—{bill}{wk}. {adj} {money(this)}."
        tuples += [_t(tname, city, a, "last week", this) for a, _ in films]
    else:
        last = _round_gross(rng, 6000, 60000) if not showcase else _round_gross(rng, 40000, 90000)
        text = f"{head}—{bill}{wk}. {adj} {money(this)}."
        tuples += [_t(tname, city, a, "this week", this) for a, _ in films]
        if week_no > 1:
            text += f" Last week, {rng.choice(ADJECTIVES).lower()} {money(last)}."
            tuples += [_t(tname, city, a, "last week", last) for a, _ in films]
        elif prev is not None:
            text += f' Last week, "{prev[0]}" ({prev[1]}), {money(last)}.'
            tuples.append(_t(tname, city, prev[0], "last week", last))
    if next_film is not None:
        text += f' Next week, "{next_film[0]}" ({next_film[1]}).'
        tuples.append(_t(tname, city, next_film[0], "next week", None))
    return Entry(text, tuples, headline=(films[0][0], this))


def _alias(key: str, i: int = 0) -> tuple[str, str]:
    f = FILM_BY_KEY[key]
    return f.aliases[min(i, len(f.aliases) - 1)], f.dist


# Bookings per 1934 issue: city → list of (theater index, [film keys or unmapped], week_no, prev, next, showcase)
def _bookings_1934(issue_no: int) -> dict[str, list[dict[str, Any]]]:
    w = issue_no  # 0 or 1: holdovers advance a week
    return {
        "Chicago": [
            {"th": 0, "films": ["gone"], "wk": 2 + w},
            {"th": 1, "films": ["lady"], "wk": 1 + w, "prev": ("Loop Follies", "Ind")},
            {"th": 2, "films": ["crimson", "patrol"], "wk": 2 + w},
            {"th": 3, "films": ["serenade"], "wk": 1 + w, "prev": ("Pagan Moon", "Ind"),
             "next": "sailor" if w == 0 else None},
        ],
        "San Francisco": [
            {"th": 0, "films": ["midnight"], "wk": 1 + w, "prev": ("Pagan Moon", "Ind")},
            {"th": 1, "films": ["gone"], "wk": 1 + w, "prev": ("Loop Follies", "Ind")},
        ],
        "Los Angeles": [
            {"th": 0, "films": ["bondage"], "wk": 2 + w},
            {"th": 1, "films": ["gone"], "wk": 2 + w, "showcase": 5},
        ],
        "Boston": [
            {"th": 0, "films": ["sailor"], "wk": 1 + w, "prev": ("Loop Follies", "Ind")},
            {"th": 1, "films": ["midnight"], "wk": 2 + w},
        ],
        "Kansas City": [
            {"th": 0, "films": ["lady"], "wk": 2 + w},
            {"th": 1, "films": ["crimson"], "wk": 1 + w, "prev": ("Pagan Moon", "Ind")},
        ],
        "Montreal": [
            {"th": 0, "films": ["gone"], "wk": 2 + w},
        ],
        "Minneapolis": [
            {"th": 0, "films": ["bondage"], "wk": 1 + w, "prev": ("Loop Follies", "Ind")},
            {"th": 1, "films": ["sailor"], "wk": 2 + w},
        ],
        "New York": [
            {"th": 0, "films": ["gone"], "wk": 3 + w},
            {"th": 1, "films": ["midnight"], "wk": 2 + w},
            {"th": 2, "films": ["patrol"], "wk": 1 + w, "prev": ("Pagan Moon", "Ind")},
            {"th": 3, "films": ["lady"], "wk": 2 + w, "alias": 1},
            {"th": 4, "films": ["serenade"], "wk": 2 + w},
            {"th": 5, "films": ["sailor"], "wk": 1 + w, "prev": ("Loop Follies", "Ind"),
             "next": "bondage" if w == 1 else None},
            # last on the page: the entries above keep their random draws (grosses, adjectives)
            {"th": 6, "films": ["orchard"], "wk": 2 + w},
        ],
    }


BOOKINGS_1926: dict[str, list[dict[str, Any]]] = {
    "New York": [
        {"th": 0, "films": ["sheikh"], "wk": 2},
        {"th": 5, "films": ["bargain"], "wk": 1},
        {"th": 4, "films": ["ranch"], "wk": 1},
    ],
    "Chicago": [
        {"th": 0, "films": ["sheikh"], "wk": 1},
        {"th": 3, "films": ["ranch", "bargain"], "wk": 1},
        # last on the page: the entries above keep their random draws
        {"th": 1, "films": ["canary"], "wk": 1},
        {"th": 2, "films": ["cavalcade"], "wk": 1},
    ],
}


def _city_block(rng: random.Random, city: str, bookings: list[dict[str, Any]], iso: str, style: str,
                *, broadway: bool = False) -> tuple[list[str], list[dict[str, Any]], list[tuple[str, int]]]:
    lines: list[str] = []
    tuples: list[dict[str, Any]] = []
    heads: list[tuple[str, int]] = []
    if broadway:
        lines.append("Broadway")
    else:
        lines.append(_dateline(city, iso))
    lines.append(LEADS[city])
    lines.append("Estimates for This Week" if style == "this" else "Estimates for Last Week")
    for b in bookings:
        films = [_alias(k, b.get("alias", 0)) if k in FILM_BY_KEY else (k, "Ind") for k in b["films"]]
        nxt = _alias(b["next"]) if b.get("next") else None
        e = _entry(rng, city, THEATERS[city][b["th"]], films, week_no=b["wk"], style=style, prev=b.get("prev"),
                   next_film=nxt, showcase=b.get("showcase"))
        lines.append(e.text)
        tuples.extend(e.tuples)
        if e.headline:
            heads.append(e.headline)
    lines.append("")
    return lines, tuples, heads


def _headline(heads: list[tuple[str, int]], city_short: str) -> str:
    a = heads[0]
    b = next((h for h in heads[1:] if h[0] != a[0]), heads[-1])
    return f"'{a[0]}' {money(a[1])} in {city_short}; '{b[0]}' {_g(b[1])}"


def _pages_for_issue(seed: int, year: int, issue_no: int, iso: str, page_no0: int) -> list[Page]:
    rng = scoped_rng(seed, "issue", iso)
    date_line = _date_line(iso)
    pages: list[Page] = []
    # front page: news only
    news = [f"VARIETY    Published Weekly at 154 West 46th Street, New York    {date_line}",
            "Exchanges Book Heavier for Spring; Circuits Want More Product", ""]
    news += [rng.choice(PROSE) for _ in range(4)]
    pages.append(Page("news", iso, news, head_lines=2))
    if year == 1926:
        lines = [f"PICTURES    VARIETY    {date_line}"]
        tuples: list[dict[str, Any]] = []
        heads: list[tuple[str, int]] = []
        for city, bookings in BOOKINGS_1926.items():
            bl, bt, bh = _city_block(rng, city, bookings, iso, "last", broadway=city == "New York")
            lines += bl
            tuples += bt
            heads += bh
        lines.insert(1, _headline(heads, "Chi"))
        pages.append(Page("grosses", iso, lines, tuples, head_lines=2))
    else:
        bookings = _bookings_1934(issue_no)
        for group in (("Chicago", "San Francisco", "Los Angeles"), ("Boston", "Kansas City", "Montreal", "Minneapolis")):
            lines = [f"{date_line}    PICTURE GROSSES    VARIETY {page_no0 + len(pages) + 8}"]
            tuples, heads = [], []
            for city in group:
                bl, bt, bh = _city_block(rng, city, bookings[city], iso, "this")
                lines += bl
                tuples += bt
                heads += bh
            lines.insert(1, _headline(heads, {"Chicago": "Chi", "Boston": "Hub"}[group[0]]))
            pages.append(Page("grosses", iso, lines, tuples, head_lines=2))
        bl, bt, bh = _city_block(rng, "New York", bookings["New York"], iso, "this", broadway=True)
        lines = [f"{date_line}    PICTURE GROSSES    VARIETY {page_no0 + len(pages) + 8}",
                 f"'{bh[0][0]}' Leads Broadway With {money(bh[0][1])}; '{bh[1][0]}' {_g(bh[1][1])}"] + bl
        pages.append(Page("broadway", iso, lines, bt, head_lines=2))
    # LEGITIMATE: stage shows, "Estimates for Last Week" — no film tuples
    legit = [f"LEGITIMATE    VARIETY    {date_line}", "Legit Grosses Hold Despite Cold", "",
             "Estimates for Last Week",
             f"\"Dodsworth,\" Shubert (20th wk) (D-1,387; $3.30). Still capacity at {money(_round_gross(rng, 18000, 25000))}.",
             f"\"Roberta,\" New Amsterdam (16th wk) (M-1,717; $3.85). Eased to {money(_round_gross(rng, 20000, 30000))}.",
             f"\"Tobacco Road,\" Forrest (14th wk) (C-1,017; $1.65). Around {money(_round_gross(rng, 6000, 9000))}.", ""]
    pages.append(Page("legitimate", iso, legit, head_lines=2))
    # VAUDEVILLE: a table, ignored
    vaude = [f"VAUDEVILLE    VARIETY    {date_line}", "BILLS NEXT WEEK", "",
             "House            Acts   Seats    Top",
             "Palace           8      1,700    $1.10",
             "State            6      3,300    75c",
             "Orpheum          7      2,200    65c", "",
             "Vaudeville units playing the picture houses will be cut to four acts under the new booking plan."]
    pages.append(Page("vaudeville", iso, vaude, head_lines=2))
    return pages


# --------------------------------------------------------------------------------------------
# Gemini examples (extractors/variety/data/examples)
# --------------------------------------------------------------------------------------------


def example_pages() -> list[tuple[list[str], list[dict[str, Any]]]]:
    """Two small worked example pages (image → JSON) for the Gemini prompt: a city column with a
    shared gross and a "Next week" line; a Broadway block with a SHOWCASE entry. Films here are
    not in the sample world, so examples never leak answers."""
    ex1 = ["Wednesday, April 4, 1934    PICTURE GROSSES    VARIETY 11",
           "'Harvest' Fair $9,000 in Buffalo; 'Comet' 7G",
           "Buffalo, April 3.",
           "Estimates for This Week",
           'Buffalo (Publix) (3,500; 30-55)—"Golden Harvest" (Par) (2d wk). Fair $9,000. Last week, $11,500.',
           'Century (Publix) (3,400; 25-40)—"Comet Road" (Col) and "Blue Lagoon Girl" (Ind). Thin $7,000. '
           'Last week, "Silver Spur" (U), $6,500. Next week, "Eastern Bride" (WB).', ""]
    t1 = [_t("Buffalo", "Buffalo", "Golden Harvest", "this week", 9000),
          _t("Buffalo", "Buffalo", "Golden Harvest", "last week", 11500),
          _t("Century", "Buffalo", "Comet Road", "this week", 7000),
          _t("Century", "Buffalo", "Blue Lagoon Girl", "this week", 7000),
          _t("Century", "Buffalo", "Silver Spur", "last week", 6500),
          _t("Century", "Buffalo", "Eastern Bride", "next week", None)]
    ex2 = ["Wednesday, April 4, 1934    PICTURE GROSSES    VARIETY 12",
           "'Flame' Leads Broadway With $41,000",
           "Broadway",
           "Estimates for This Week",
           'Rivoli (2,200; 40-99)—"Flame of Paris" (UA) (3d wk). Strong $41,000. Last week, $47,000.',
           'SHOWCASE (4 houses)—"Flame of Paris" (UA). Hefty $58,000.', "",
           "Hollywood Music Box Revue at the Palace with eight acts, $22,000."]
    t2 = [_t("Rivoli", "New York", "Flame of Paris", "this week", 41000),
          _t("Rivoli", "New York", "Flame of Paris", "last week", 47000),
          _t("SHOWCASE:4", "New York", "Flame of Paris", "this week", 58000)]
    return [(ex1, t1), (ex2, t2)]


def write_gemini_examples(out_dir: Path | str) -> list[Path]:
    """Write ``example{1,2}.png`` + ``.json`` (the tuples in the response schema, ``conf`` 1.0).
    The shipped files under ``extractors/variety/data/examples`` come from this function."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for i, (lines, tuples) in enumerate(example_pages(), start=1):
        img = render_page(lines, width=900, head_lines=2)
        (out / f"example{i}.png").write_bytes(png_bytes(img))
        data = [{**t, "conf": 1.0} for t in tuples]
        (out / f"example{i}.json").write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        written += [out / f"example{i}.png", out / f"example{i}.json"]
    return written


# --------------------------------------------------------------------------------------------
# The world
# --------------------------------------------------------------------------------------------


def _film_item_metadata(f: VFilm) -> dict[str, Any]:
    meta = {"identifier": f.ia_identifier, "mediatype": "movies", "collection": ["feature_films", "moviesandfilms"],
            "title": f.title, "year": str(f.year), "date": f"{f.year}", "sound": "sound" if f.sound else "silent",
            "color": "black and white", "runtime": "68 min" if f.sound else "62 min",
            "description": f"{f.title} ({f.year}), a feature film distributed by {f.dist}.",
            "licenseurl": "http://creativecommons.org/publicdomain/mark/1.0/"}
    if not f.sound_metadata:
        del meta["sound"]
    return meta


def generate_variety_world(out_dir: Path | str, seed: int = DEFAULT_SEED) -> dict[str, Any]:
    """Write the Variety world under ``out_dir`` (replacing what was there) and return its manifest."""
    out = Path(out_dir)
    for sub in ("ia", "pages", "gold"):
        if (out / sub).exists():
            shutil.rmtree(out / sub)
    out.mkdir(parents=True, exist_ok=True)
    ia_dir = out / "ia"
    manifest: dict[str, Any] = {"generator": "cinesub.sample.variety", "generator_version": GENERATOR_VERSION,
                                "seed": seed, "items": [], "films": [], "aliases": {}, "ocr_noise": [],
                                "gemini_planted_errors": [], "top100": {}}
    alias_counts: dict[int, dict[str, int]] = {}
    for item in ITEMS:
        ident = item["identifier"]
        pages: list[Page] = [Page("colophon", item["issues"][0], COLOPHON.format(identifier=ident).split("\n"),
                                  head_lines=0)]
        for n, iso in enumerate(item["issues"]):
            pages += _pages_for_issue(seed, item["year"], n, iso, len(pages))
        ocr_texts: list[str] = []
        jp2_members: list[tuple[str, bytes]] = []
        page_rows: list[dict[str, Any]] = []
        kind_seen: dict[str, int] = {}
        (out / "pages" / ident).mkdir(parents=True, exist_ok=True)
        (out / "gold" / ident).mkdir(parents=True, exist_ok=True)
        for leaf, page in enumerate(pages):
            text = "\n".join(page.lines).rstrip("\n") + "\n"
            img = render_page(page.lines, head_lines=page.head_lines)
            png = png_bytes(img)
            (out / "pages" / ident / f"{leaf:04d}.png").write_bytes(png)
            jp2_members.append((f"{ident}_jp2/{ident}_{leaf:04d}.jp2", jp2_bytes(img)))
            occ = kind_seen.get(page.kind, 0)
            kind_seen[page.kind] = occ + 1
            noisy, made = ocr_noise(text, page.kind, occ, scoped_rng(seed, "ocr", ident, leaf))
            ocr_texts.append(noisy)
            for m in made:
                manifest["ocr_noise"].append({"item_id": ident, "page": leaf, **m})
            gold = {"item_id": ident, "issue_date": page.issue_date, "page": leaf, "kind": page.kind,
                    "text": text, "tuples": page.tuples}
            (out / "gold" / ident / f"{leaf:04d}.json").write_text(
                json.dumps(gold, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
            page_rows.append({"page": leaf, "issue_date": page.issue_date, "kind": page.kind,
                              "gold_tuples": len(page.tuples), "png_sha256": sha256_hex(png),
                              "pixel_sha256": pixel_sha256(img)})
            for t in page.tuples:
                counts = alias_counts.setdefault(item["year"], {})
                counts[t["movie"]] = counts.get(t["movie"], 0) + 1
        zpath = out / f".{ident}_jp2.zip.tmp"
        write_zip(zpath, jp2_members)
        files = {**page_derivatives(ident, ocr_texts), f"{ident}_jp2.zip": zpath.read_bytes()}
        zpath.unlink()
        meta = {"identifier": ident, "mediatype": "texts", "collection": ["mediahistory", "theatreandvaudeville"],
                "title": item["title"], "creator": "Variety", "journal-title": "Variety", "format": "Periodicals",
                "publisher": "New York, NY: Variety Publishing Company", "source": "Microfilm",
                "volume": str(item["volume"]), "year": str(item["year"]),
                "date": item["issues"][0], "date-start": item["issues"][0], "date-end": item["issues"][-1],
                "date-string": f"{MONTHS[item['month'] - 1]} {item['year']}", "page-count": str(len(pages)),
                "sponsor": "Media History Digital Library", "language": "English"}
        write_item(ia_dir, ident, meta, files)
        manifest["items"].append({"identifier": ident, "year": item["year"], "issues": list(item["issues"]),
                                  "pages": page_rows})
    # film items on IA
    for f in FILMS:
        if f.ia_identifier:
            meta = _film_item_metadata(f)
            write_item(ia_dir, f.ia_identifier, meta, {f"{f.ia_identifier}_meta.xml": film_meta_xml(f.ia_identifier, meta)})
        manifest["films"].append({"key": f.key, "imdb": f.imdb, "title": f.title, "year": f.year, "dist": f.dist,
                                  "sound": f.sound, "sound_metadata": f.sound_metadata, "aliases": list(f.aliases),
                                  "ia_identifier": f.ia_identifier})
    # alias map per year (every printed form of a catalog film), counts, top-100 membership
    for year, counts in sorted(alias_counts.items()):
        amap = {}
        for f in FILMS:
            for a in f.aliases:
                if a in counts and f.year <= year:
                    amap[a] = f.imdb
        manifest["aliases"][str(year)] = {"map": dict(sorted(amap.items())),
                                          "counts": dict(sorted(counts.items()))}
    # top-100: every catalog film with a last-week gross in a US city (the world is small)
    for year in sorted(alias_counts):
        members = set()
        for ident in [it["identifier"] for it in ITEMS if it["year"] == year]:
            for gp in sorted((out / "gold" / ident).glob("*.json")):
                for t in json.loads(gp.read_text(encoding="utf-8"))["tuples"]:
                    imdb = manifest["aliases"][str(year)]["map"].get(t["movie"])
                    if imdb and t["week"] == "last week" and t["city"] != "Montreal" and \
                            not t["theater"].startswith("SHOWCASE"):
                        members.add(imdb)
        manifest["top100"][str(year)] = sorted(members)
    manifest["gemini_planted_errors"] = _plan_gemini_errors(out)
    catalog = ["imdb\ttitle\tyear\tvotes"]
    rows = [(f.imdb, f.title, f.year, f.votes) for f in FILMS] + list(CATALOG_EXTRA)
    catalog += [f"{i}\t{t}\t{y}\t{v}" for i, t, y, v in sorted(rows)]
    (out / "catalog.tsv").write_text("\n".join(catalog) + "\n", encoding="utf-8")
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True, ensure_ascii=False) + "\n",
                                       encoding="utf-8")
    return manifest


def _plan_gemini_errors(out: Path) -> list[dict[str, Any]]:
    """The Gemini fixture's planted errors, one of each kind, on the 1934 item's first pages with
    tuples: ``dropped`` (the tuple is missing), ``wrong_gross`` (gross + 1000), ``swapped_week``
    (a ``this week`` tuple answered as ``last week``)."""
    ident = ITEMS[-1]["identifier"]
    with_tuples = []
    for gp in sorted((out / "gold" / ident).glob("*.json")):
        g = json.loads(gp.read_text(encoding="utf-8"))
        if g["tuples"]:
            with_tuples.append(g)
    plan = []
    for g, kind in zip(with_tuples, ("dropped", "wrong_gross", "swapped_week")):
        idx = next(i for i, t in enumerate(g["tuples"]) if t["week"] == "this week" and t["gross"] is not None)
        t = g["tuples"][idx]
        wrong: dict[str, Any] = dict(t)
        if kind == "wrong_gross":
            wrong["gross"] = t["gross"] + 1000
        elif kind == "swapped_week":
            wrong["week"] = "last week"
        plan.append({"item_id": ident, "page": g["page"], "kind": kind, "index": idx, "gold": t,
                     "answer": None if kind == "dropped" else wrong})
    return plan


def load_gold(world_dir: Path | str) -> dict[tuple[str, int], dict[str, Any]]:
    """``(item_id, page) → gold page dict`` for a generated world."""
    out = {}
    for gp in sorted(Path(world_dir, "gold").glob("*/*.json")):
        g = json.loads(gp.read_text(encoding="utf-8"))
        out[(g["item_id"], g["page"])] = g
    return out


if __name__ == "__main__":  # python -m cinesub.sample.variety OUT_DIR [SEED]
    import sys

    m = generate_variety_world(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else DEFAULT_SEED)
    print(json.dumps({"items": [i["identifier"] for i in m["items"]], "films": len(m["films"])}, indent=1))
