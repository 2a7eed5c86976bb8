"""IMDb: id canonicalisation, the non-commercial datasets and title pages (SPEC A1, A11; issue 16).

Datasets first, title pages only for what the datasets lack:

* :func:`canonical_imdb_id` — the shared key: ``tt`` + 7 or 8 digits, from whatever a review page
  printed (title URLs in all their forms, relative ``/title/tt…/`` paths, legacy
  ``Title?0123456`` URLs, bare ids).
* the six datasets (:data:`DATASETS`) — streamed and filtered by id in
  :mod:`extractors.sources.imdb_datasets` (:func:`read_title_basics`, :func:`read_title_ratings`
  and :func:`read_imdb_facts` are re-exported here): title, original title, year, runtime,
  genres, rating, votes, directors, writers, principal cast, akas.
* :func:`parse_imdb_title` — the dataset facts joined with the title pages: JSON-LD (relative or
  absolute urls, HTML entities inside JSON strings, numbers or strings), the page's
  ``__NEXT_DATA__`` (countries of origin, spoken languages, certificates, plots, keywords), the
  plot-summary page and the parental-guide page (current ``__NEXT_DATA__`` layout or the legacy
  ``#certificates`` HTML). Only pages supply plot summaries, synopsis, certificates, keywords,
  countries and languages.
* :func:`is_waf_challenge` — IMDb's AWS WAF answer (202 with an empty body, or an
  ``x-amzn-waf-action`` header): a blocked page, never content.
"""

from __future__ import annotations

import hashlib
import html as htmllib
import json
import re
from collections.abc import Mapping
from typing import Any, Literal

from cinesub.records import CastMember, ImdbRecord
from extractors.sources._html import Node, clean_text, parse_html
from extractors.sources.imdb_datasets import (  # noqa: F401  (re-exported: the dataset API)
    BASICS_COLUMNS,
    DATASETS,
    RATINGS_COLUMNS,
    read_imdb_facts,
    read_title_basics,
    read_title_ratings,
)

#: IMDb www pages the mirror fetches per title (``{tt}`` is the id), stored as
#: ``<sources_dir>/imdb/title/<tt>/<page>.html``. The title page carries the same ``__NEXT_DATA__``
#: sections (aboveTheFoldData / mainColumnData) as ``/reference``, so that page is not needed.
IMDB_PAGES: dict[str, str] = {"index": "/title/{tt}/", "plotsummary": "/title/{tt}/plotsummary/",
                              "parentalguide": "/title/{tt}/parentalguide/"}
IMDB_ROOT = "https://www.imdb.com"

IdStatus = Literal["ok", "missing", "malformed"]

_TT = re.compile(r"(?<![A-Za-z0-9])tt(\d+)(?![0-9])", re.I)
_TITLE_PATH_TT = re.compile(r"/title/tt(\d+)(?![0-9])", re.I)
_LEGACY = re.compile(r"imdb\.com/Title\?(\d{7,8})(?![0-9])", re.I)
_SEARCH_PATH = re.compile(r"imdb\.com/(?:find|search)\b", re.I)
_DURATION = re.compile(r"^PT(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?$")
_NO_SYNOPSIS = re.compile(r"don.t have (?:a|any) (?:Synopsis|Plot Summar)", re.I)


# --------------------------------------------------------------------------------------------
# Ids
# --------------------------------------------------------------------------------------------
def canonical_imdb_id(link: str | None) -> tuple[str | None, IdStatus]:
    """``(id, status)``: ``("tt0123456", "ok")``, ``(None, "missing")`` or ``(None, "malformed")``.

    Accepts bare ids and IMDb title URLs in any form (http/https, www/m/no host prefix, query
    strings, sub-pages such as ``/reviews``, legacy ``imdb.com/Title?0123456``). Ids with other
    than 7 or 8 digits, search URLs (``/find?q=...``), URLs of other sites and anything without
    a title id are malformed: a title and year alone never identify a film.
    """
    if link is None or not str(link).strip():
        return None, "missing"
    s = str(link).strip()
    looks_like_url = "://" in s or "/" in s or s.lower().startswith("www.") or "." in s
    if looks_like_url and "imdb.com" not in s.lower():
        return None, "malformed"
    m = _TITLE_PATH_TT.search(s)
    if m is None:
        legacy = _LEGACY.search(s)
        if legacy:
            return f"tt{legacy.group(1)}", "ok"
        if looks_like_url and _SEARCH_PATH.search(s):
            return None, "malformed"
        m = _TT.search(s) if not looks_like_url else None
    if m is None:
        return None, "malformed"
    digits = m.group(1)
    if len(digits) not in (7, 8):
        return None, "malformed"
    return f"tt{digits}", "ok"


# --------------------------------------------------------------------------------------------
# WAF
# --------------------------------------------------------------------------------------------
def is_waf_challenge(status: int, headers: Mapping[str, str] | None, body: bytes | None) -> bool:
    """True when IMDb's AWS WAF answered instead of the page: ``202`` with an empty body (the
    JS challenge; ``content-length: 0``), or any response carrying ``x-amzn-waf-action``
    (``challenge``; ``captcha`` comes with ``405``). Such a body is never parsed."""
    for k in (headers or {}):
        if str(k).lower() == "x-amzn-waf-action":
            return True
    return status == 202 and not (body or b"").strip()


# --------------------------------------------------------------------------------------------
# Title pages: JSON-LD
# --------------------------------------------------------------------------------------------
_LD_TYPES = ("Movie", "TVSeries", "TVMovie", "CreativeWork", "VideoGame", "TVEpisode", "TVMiniSeries", "Short")


def _unescape_deep(v: Any) -> Any:
    """HTML entities inside JSON strings (``&quot;``, ``&apos;``, ``&amp;``) un-escaped, recursively."""
    if isinstance(v, str):
        return htmllib.unescape(v) if "&" in v else v
    if isinstance(v, list):
        return [_unescape_deep(x) for x in v]
    if isinstance(v, dict):
        return {k: _unescape_deep(x) for k, x in v.items()}
    return v


def _script_text(node: Node) -> str:
    return "".join(c for c in node.children if isinstance(c, str))


def parse_json_ld(obj: Any) -> dict:
    """The title object of a JSON-LD value (a dict, a list or an ``@graph``), entities un-escaped."""
    items = obj if isinstance(obj, list) else (obj.get("@graph") if isinstance(obj, dict) and "@graph" in obj else [obj])
    for item in items or []:
        if isinstance(item, dict) and item.get("@type") in _LD_TYPES:
            return _unescape_deep(item)
    return {}


def _json_ld(root: Node) -> dict:
    for s in root.find_all("script"):
        if s.attrs.get("type", "").lower() != "application/ld+json":
            continue
        try:
            data = json.loads(_script_text(s))
        except ValueError:
            continue
        found = parse_json_ld(data)
        if found:
            return found
    return {}


def _absolute(url: Any) -> str | None:
    u = _s(url)
    if u is None:
        return None
    return IMDB_ROOT + u if u.startswith("/") else u


def _s(v: Any) -> str | None:
    if v is None or isinstance(v, (dict, list)):
        return None
    s = htmllib.unescape(str(v)).strip()
    return s or None


def _names(v: Any, person_only: bool = True) -> list[str]:
    items = v if isinstance(v, list) else ([v] if v else [])
    out = []
    for it in items:
        if isinstance(it, dict):
            if person_only and it.get("@type") not in (None, "Person"):
                continue
            name = _s(it.get("name"))
        else:
            name = _s(it)
        if name and name not in out:
            out.append(name)
    return out


def _duration_min(v: Any) -> int | None:
    m = _DURATION.match(str(v or ""))
    if not m or not any(m.groups()):
        return None
    h, mi, sec = (int(x) if x else 0 for x in m.groups())
    return h * 60 + mi + (1 if sec >= 30 else 0)


def _int(v: Any) -> int | None:
    try:
        return int(v) if v is not None and str(v).strip() not in ("", "\\N") else None
    except (TypeError, ValueError):
        return None


def _float(v: Any) -> float | None:
    try:
        return float(v) if v is not None and str(v).strip() not in ("", "\\N") else None
    except (TypeError, ValueError):
        return None


# --------------------------------------------------------------------------------------------
# Title pages: __NEXT_DATA__
# --------------------------------------------------------------------------------------------
#: ISO 3166 alpha-2 → the English name IMDb prints, for the ids ``__NEXT_DATA__`` gives without
#: a ``text`` (aboveTheFoldData.countriesOfOrigin); an id not listed stays the id
COUNTRY_NAMES: dict[str, str] = {
    "US": "United States", "GB": "United Kingdom", "CA": "Canada", "AU": "Australia", "NZ": "New Zealand",
    "IE": "Ireland", "FR": "France", "DE": "Germany", "IT": "Italy", "ES": "Spain", "PT": "Portugal",
    "NL": "Netherlands", "BE": "Belgium", "LU": "Luxembourg", "CH": "Switzerland", "AT": "Austria",
    "SE": "Sweden", "NO": "Norway", "DK": "Denmark", "FI": "Finland", "IS": "Iceland", "PL": "Poland",
    "CZ": "Czech Republic", "SK": "Slovakia", "HU": "Hungary", "RO": "Romania", "BG": "Bulgaria",
    "GR": "Greece", "TR": "Turkey", "RU": "Russia", "UA": "Ukraine", "IL": "Israel", "EG": "Egypt",
    "IR": "Iran", "IN": "India", "CN": "China", "HK": "Hong Kong", "TW": "Taiwan", "JP": "Japan",
    "KR": "South Korea", "ID": "Indonesia", "MY": "Malaysia", "SG": "Singapore", "TH": "Thailand",
    "VN": "Vietnam", "PH": "Philippines", "MX": "Mexico", "BR": "Brazil", "AR": "Argentina", "CL": "Chile",
    "CO": "Colombia", "PE": "Peru", "ZA": "South Africa", "NG": "Nigeria", "AE": "United Arab Emirates",
    "SA": "Saudi Arabia",
}
#: ISO 639-1 → English language name, for spoken-language ids without a ``text``
LANGUAGE_NAMES: dict[str, str] = {
    "en": "English", "fr": "French", "de": "German", "es": "Spanish", "it": "Italian", "pt": "Portuguese",
    "ro": "Romanian", "id": "Indonesian", "fa": "Persian", "ar": "Arabic", "vi": "Vietnamese", "ko": "Korean",
    "ja": "Japanese", "zh": "Mandarin", "ru": "Russian", "hi": "Hindi", "tr": "Turkish", "nl": "Dutch",
    "sv": "Swedish", "da": "Danish", "no": "Norwegian", "fi": "Finnish", "pl": "Polish", "el": "Greek",
    "he": "Hebrew", "hu": "Hungarian", "cs": "Czech", "th": "Thai",
}


def next_data(html: str | None) -> dict:
    """``props.pageProps`` of the page's ``<script id="__NEXT_DATA__">`` ({} when absent or broken)."""
    if not html or "__NEXT_DATA__" not in html:
        return {}
    node = parse_html(html).find("script", id="__NEXT_DATA__")
    if node is None:
        return {}
    try:
        data = json.loads(_script_text(node))
    except ValueError:
        return {}
    props = data.get("props") if isinstance(data, dict) else None
    page = props.get("pageProps") if isinstance(props, dict) else None
    return page if isinstance(page, dict) else {}


def _get(d: Any, *path: str) -> Any:
    for k in path:
        if not isinstance(d, dict):
            return None
        d = d.get(k)
    return d


def _edges(conn: Any) -> list[dict]:
    edges = conn.get("edges") if isinstance(conn, dict) else None
    return [e["node"] for e in edges or [] if isinstance(e, dict) and isinstance(e.get("node"), dict)]


def _plaid(node: dict) -> str | None:
    """``plotText.plaidHtml`` as text: tags stripped (``<br/>`` → line break), entities un-escaped."""
    pt = node.get("plotText") if isinstance(node, dict) else None
    raw = (pt.get("plaidHtml") or pt.get("plainText")) if isinstance(pt, dict) else None
    if not raw:
        return None
    text = parse_html(str(raw)).text().strip()
    return text or None


def _id_text_list(items: Any, table: Mapping[str, str]) -> list[str]:
    out: list[str] = []
    for it in items or []:
        if not isinstance(it, dict):
            continue
        name = _s(it.get("text")) or (table.get(str(it.get("id"))) if it.get("id") else None) or _s(it.get("id"))
        if name and name not in out:
            out.append(name)
    return out


def _attribute_note(attrs: Any) -> str | None:
    texts = [_s(a.get("text")) if isinstance(a, dict) else _s(a) for a in attrs or []]
    texts = [t for t in texts if t]
    if not texts:
        return None
    joined = ", ".join(texts)
    return joined if joined.startswith("(") and joined.endswith(")") else f"({joined})"


def _cert_string(country: str | None, label: str | None, note: str | None) -> str | None:
    if not country or not label:
        return None
    return f"{country}:{label}" + (f"::{note}" if note else "")


def next_data_certificates(page: Mapping[str, Any]) -> list[str]:
    """``Country:Label[::note]`` strings from a title/reference page's
    ``mainColumnData.certificates.edges[].node{rating, country{id,text}, attributes}`` (never from
    ``aboveTheFoldData.certificate``, which IMDb localises to the requester's country)."""
    out: list[str] = []
    for node in _edges(_get(page, "mainColumnData", "certificates")):
        country = node.get("country")
        name = (_s(country.get("text")) or COUNTRY_NAMES.get(str(country.get("id"))) or _s(country.get("id"))) \
            if isinstance(country, dict) else _s(country)
        raw = _cert_string(name, _s(node.get("rating")), _attribute_note(node.get("attributes")))
        if raw:
            out.append(raw)
    return out


def parse_next_data_title(page: Mapping[str, Any]) -> dict[str, Any]:
    """What a title (or ``/reference``) page's ``__NEXT_DATA__`` offers beyond the datasets:
    ``countries``, ``languages``, ``certificates``, ``summaries``, ``synopsis``, ``outline``,
    ``keywords``, plus fallbacks ``title`` (original title: ``titleText`` is localised), ``year``,
    ``runtime_min``, ``rating``, ``votes``, ``genres``."""
    above = page.get("aboveTheFoldData") if isinstance(page.get("aboveTheFoldData"), dict) else {}
    main = page.get("mainColumnData") if isinstance(page.get("mainColumnData"), dict) else {}
    both = (main, above)

    def first(*path: str) -> Any:
        for d in both:
            v = _get(d, *path)
            if v not in (None, [], {}):
                return v
        return None

    countries = _id_text_list(_get(main, "countriesDetails", "countries"), COUNTRY_NAMES) \
        or _id_text_list(first("countriesOfOrigin", "countries"), COUNTRY_NAMES)
    languages = _id_text_list(first("spokenLanguages", "spokenLanguages"), LANGUAGE_NAMES)
    summaries = [t for t in (_plaid(n) for n in _edges(main.get("summaries"))) if t]
    synopses = [t for t in (_plaid(n) for n in _edges(main.get("synopses"))) if t]
    outlines = [t for t in (_plaid(n) for n in _edges(main.get("outlines"))) if t]
    keywords = []
    for n in _edges(main.get("storylineKeywords")):
        k = _s(n.get("text"))
        if k and k not in keywords:
            keywords.append(k)
    genres = [g for g in (_s(x.get("text")) if isinstance(x, dict) else None
                          for x in _get(main, "genres", "genres") or []) if g]
    if not genres:
        genres = [g for g in (_s(_get(x, "genre", "text")) for x in _get(above, "titleGenres", "genres") or []) if g]
    runtime_s = _int(first("runtime", "seconds"))
    return {
        "countries": countries, "languages": languages, "certificates": next_data_certificates(page),
        "summaries": summaries, "synopsis": synopses[0] if synopses else None,
        "outline": outlines[0] if outlines else _s(first("plot", "plotText", "plainText")),
        "keywords": keywords, "genres": genres,
        "title": _s(first("originalTitleText", "text")) or _s(first("titleText", "text")),
        "year": _int(first("releaseYear", "year")),
        "runtime_min": round(runtime_s / 60) if runtime_s else None,
        "rating": _float(first("ratingsSummary", "aggregateRating")),
        "votes": _int(first("ratingsSummary", "voteCount")),
    }


# --------------------------------------------------------------------------------------------
# Title pages: HTML sections
# --------------------------------------------------------------------------------------------
def _cast(root: Node) -> list[CastMember]:
    out: list[CastMember] = []
    for item in root.find_all(pred=lambda n: n.attrs.get("data-testid") == "title-cast-item"):
        actor_node = item.find(pred=lambda n: n.attrs.get("data-testid") == "title-cast-item__actor")
        if actor_node is None:
            continue
        actor = actor_node.text().strip()
        chars = [n.text().strip() for n in item.find_all(pred=lambda n: n.attrs.get("data-testid") == "cast-item-characters-link")]
        extra = [n.text().strip() for n in item.find_all(pred=lambda n: n.has_class("title-cast-item__attribute"))]
        if actor:
            out.append(CastMember(actor=actor, characters=[c for c in chars if c], additional_texts=[e for e in extra if e]))
    return out


def _summaries(root: Node) -> tuple[list[str], str | None]:
    """(plot summaries, synopsis) from the modern or the pre-2023 plot-summary page."""
    summaries: list[str] = []
    synopsis: str | None = None
    sec = root.find(pred=lambda n: n.attrs.get("data-testid") == "sub-section-summaries")
    if sec is not None:
        for div in sec.find_all(pred=lambda n: n.has_class("ipc-html-content-inner-div")):
            t = div.text().strip()
            if t:
                summaries.append(t)
    old = root.find(id="plot-summaries-content")
    if old is not None and not summaries:
        for li in old.find_all("li"):
            p = li.find("p")
            t = (p or li).text().strip()
            if t and not _NO_SYNOPSIS.search(t):
                summaries.append(t)
    sec = root.find(pred=lambda n: n.attrs.get("data-testid") == "sub-section-synopsis")
    if sec is not None:
        parts = [d.text().strip() for d in sec.find_all(pred=lambda n: n.has_class("ipc-html-content-inner-div"))]
        text = "\n\n".join(p for p in parts if p)
        synopsis = text or None
    old = root.find(id="plot-synopsis-content")
    if old is not None and synopsis is None:
        text = clean_text(old.raw_text()).strip()
        synopsis = text if text and not _NO_SYNOPSIS.search(text) else None
    if synopsis is not None and _NO_SYNOPSIS.search(synopsis):
        synopsis = None
    return summaries, synopsis


def _guide_next_data_certificates(page: Mapping[str, Any]) -> list[str] | None:
    """Current parental-guide layout: ``contentData.certificates[*]{country, ratings[*].rating}``
    (None when the page has no such data, [] when it lists none)."""
    content = page.get("contentData")
    if not isinstance(content, dict) or "certificates" not in content:
        return None
    out: list[str] = []
    for c in content.get("certificates") or []:
        if not isinstance(c, dict):
            continue
        country = c.get("country")
        name = (_s(country.get("text")) or COUNTRY_NAMES.get(str(country.get("id")))) if isinstance(country, dict) \
            else _s(country)
        for r in c.get("ratings") or []:
            label = _s(r.get("rating")) if isinstance(r, dict) else _s(r)
            note = None
            if isinstance(r, dict):
                extra = _s(r.get("extraInformation"))
                note = (extra if extra and extra.startswith("(") else f"({extra})") if extra \
                    else _attribute_note(r.get("attributes"))
            raw = _cert_string(name, label, note)
            if raw:
                out.append(raw)
    return out


def parse_certificates(parentalguide_html: str | None) -> list[str]:
    """Certificate strings as IMDb shows them, ``Country:Label`` plus ``::(note)`` when noted.

    Understands the current page (``__NEXT_DATA__`` ``contentData.certificates``), the
    labelled-list layout (``certificates-item`` with a country label and one entry per rating)
    and the legacy inline layout (``#certificates`` / ``#certifications-list``: ``Country:Label``
    anchors followed by a note).
    """
    from_next = _guide_next_data_certificates(next_data(parentalguide_html))
    if from_next is not None:
        return from_next
    root = parse_html(parentalguide_html)
    out: list[str] = []
    items = root.find_all(pred=lambda n: n.attrs.get("data-testid") == "certificates-item")
    for item in items:
        label_node = item.find(pred=lambda n: n.has_class("ipc-metadata-list-item__label"))
        country = label_node.text().strip() if label_node is not None else ""
        for li in item.find_all("li"):
            a = li.find("a")
            if a is None:
                continue
            label = a.text().strip()
            note_node = li.find(pred=lambda n: n.has_class("ipc-metadata-list-item__list-content-item--subText"))
            note = note_node.text().strip() if note_node is not None else ""
            if country and label:
                out.append(f"{country}:{label}" + (f"::{note}" if note else ""))
    if items:
        return out
    box = root.find(id="certifications-list") or root.find(id="certificates")
    if box is None:
        return out
    for li in box.find_all("li"):
        a = li.find("a")
        if a is None:
            continue
        main = a.text().strip()
        if ":" not in main:
            continue
        rest = li.text().strip()
        note = rest[len(main):].strip() if rest.startswith(main) else ""
        out.append(main + (f"::{note}" if note else ""))
    return out


# --------------------------------------------------------------------------------------------
# One record
# --------------------------------------------------------------------------------------------
def _merge_cast(principals: list[dict] | None, page_cast: list[CastMember]) -> list[CastMember]:
    """The dataset's principal cast (numeric ``ordering``) completed from the title page: a
    principal found on the page takes the page's characters when the dataset has none and the
    page's attribute texts (``(voice)``, ``(as …)``); page cast members not among the principals
    follow in page order (the page shows the fuller cast)."""
    if not principals:
        return page_cast
    by_name = {c.actor: c for c in page_cast}
    out: list[CastMember] = []
    seen: set[str] = set()
    for p in principals:
        name = p.get("name")
        if not name or name in seen:
            continue
        seen.add(name)
        on_page = by_name.get(name)
        chars = list(p.get("characters") or []) or (list(on_page.characters) if on_page else [])
        out.append(CastMember(actor=name, characters=chars,
                              additional_texts=list(on_page.additional_texts) if on_page else []))
    out += [c for c in page_cast if c.actor not in seen]
    return out


def _genres(raw: Any) -> list[str] | None:
    if isinstance(raw, str) and raw not in ("", "\\N"):
        return [g.strip() for g in raw.split(",") if g.strip()]
    if isinstance(raw, list) and raw:
        return [str(g) for g in raw]
    return None


def parse_imdb_title(
    index_html: str | None,
    plotsummary_html: str | None,
    parentalguide_html: str | None,
    basics_row: dict | None,
) -> ImdbRecord:
    """One :class:`ImdbRecord` from the dataset facts and the three title pages (any may be empty).

    ``basics_row`` is a title.basics row, optionally joined with title.ratings (``averageRating``,
    ``numVotes``) or a :func:`read_imdb_facts` entry (which adds ``directors``, ``writers``,
    ``principals``, ``akas``). Dataset values win where both exist; pages fill the rest and alone
    supply plots, synopsis, certificates, keywords, countries and languages (JSON-LD first,
    ``__NEXT_DATA__`` where JSON-LD lacks them, e.g. countryOfOrigin/inLanguage). Raises
    ``ValueError`` only when no IMDb id can be found at all."""
    row = dict(basics_row or {})
    root = parse_html(index_html)
    ld = _json_ld(root)
    nd = parse_next_data_title(next_data(index_html)) if index_html else parse_next_data_title({})
    imdb_id = _s(row.get("tconst"))
    if imdb_id is None:
        imdb_id, _status = canonical_imdb_id(_absolute(ld.get("url")))
    if imdb_id is None:
        raise ValueError("no IMDb id in the dataset row or the title page")
    title = _s(row.get("primaryTitle")) or _s(ld.get("name")) or nd["title"]
    if title is None:
        t = root.find("title")
        title = re.sub(r"\s*\(\d{4}\)\s*-\s*IMDb\s*$", "", t.text()).strip() if t is not None else ""
    year = _int(row.get("startYear"))
    if year is None and _s(ld.get("datePublished")):
        year = _int(str(ld["datePublished"])[:4])
    if year is None:
        year = nd["year"]
    runtime = _int(row.get("runtimeMinutes"))
    if runtime is None:
        runtime = _duration_min(ld.get("duration")) or nd["runtime_min"]
    agg = ld.get("aggregateRating") if isinstance(ld.get("aggregateRating"), dict) else {}
    rating = _float(row.get("averageRating"))
    if rating is None:
        rating = _float(agg.get("ratingValue"))
    if rating is None:
        rating = nd["rating"]
    votes = _int(row.get("numVotes"))
    if votes is None:
        votes = _int(agg.get("ratingCount")) if agg else None
    if votes is None:
        votes = nd["votes"]
    genres = _genres(row.get("genres")) or _names(ld.get("genre"), person_only=False) or nd["genres"]
    keywords_raw = _s(ld.get("keywords"))
    topics = [k.strip() for k in keywords_raw.split(",") if k.strip()] if keywords_raw else []
    topics += [k for k in nd["keywords"] if k not in topics]
    summaries, synopsis = _summaries(parse_html(plotsummary_html))
    summaries = summaries or nd["summaries"]
    plot = summaries[0] if summaries else (_s(ld.get("description")) or nd["outline"])
    if synopsis is None:
        synopsis = nd["synopsis"]
    page_cast = _cast(root) or [CastMember(actor=n) for n in _names(ld.get("actor"))]
    cast = _merge_cast(row.get("principals"), page_cast)
    directors = list(row.get("directors") or []) or _names(ld.get("director"))
    writers = list(row.get("writers") or []) or _names(ld.get("creator"))
    certificates = parse_certificates(parentalguide_html) or nd["certificates"]
    original = _s(row.get("originalTitle"))
    return ImdbRecord(
        imdb_id=imdb_id,
        title=title or "",
        original_title=original,
        year=year,
        runtime_min=runtime,
        rating=rating,
        votes=votes,
        genres=genres,
        countries=_names(ld.get("countryOfOrigin"), person_only=False) or nd["countries"],
        languages=_names(ld.get("inLanguage"), person_only=False) or nd["languages"],
        topics=topics,
        plot=plot,
        synopsis=synopsis,
        certificates=certificates,
        directors=directors,
        writers=writers,
        cast=cast,
        raw_sha256=hashlib.sha256((index_html or "").encode("utf-8")).hexdigest() if index_html else None,
    )
