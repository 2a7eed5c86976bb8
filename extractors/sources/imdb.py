"""IMDb: id canonicalisation, the non-commercial datasets and title pages (SPEC A1, A11).

* :func:`canonical_imdb_id` — the shared key: ``tt`` + 7 or 8 digits, from whatever a review page
  printed (title URLs in all their forms, legacy ``Title?0123456`` URLs, bare ids).
* :func:`read_title_basics` / :func:`read_title_ratings` — the TSV datasets (``\\N`` is null, no
  quoting; plain or gzip), as polars frames.
* :func:`parse_imdb_title` — title page (JSON-LD + cast), plot-summary page and parental-guide
  page joined with the dataset row into an :class:`~cinesub.records.ImdbRecord`.
"""

from __future__ import annotations

import gzip
import hashlib
import html as htmllib
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

import polars as pl

from cinesub.records import CastMember, ImdbRecord
from extractors.sources._html import Node, clean_text, parse_html

IdStatus = Literal["ok", "missing", "malformed"]

_TT = re.compile(r"(?<![A-Za-z0-9])tt(\d+)(?![0-9])", re.I)
_TITLE_PATH_TT = re.compile(r"/title/tt(\d+)(?![0-9])", re.I)
_LEGACY = re.compile(r"imdb\.com/Title\?(\d{7,8})(?![0-9])", re.I)
_SEARCH_PATH = re.compile(r"imdb\.com/(?:find|search)\b", re.I)
_DURATION = re.compile(r"^PT(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?$")
_NO_SYNOPSIS = re.compile(r"don.t have (?:a|any) (?:Synopsis|Plot Summar)", re.I)

BASICS_COLUMNS = ["tconst", "titleType", "primaryTitle", "originalTitle", "isAdult", "startYear",
                  "endYear", "runtimeMinutes", "genres"]
RATINGS_COLUMNS = ["tconst", "averageRating", "numVotes"]


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
# Datasets
# --------------------------------------------------------------------------------------------
def _read_tsv(path: Path | str, columns: list[str], ids: Iterable[str] | None) -> pl.DataFrame:
    path = Path(path)
    opts: dict[str, Any] = dict(separator="\t", quote_char=None, null_values=["\\N"],
                                schema_overrides={c: pl.Utf8 for c in columns}, infer_schema=False)
    if path.suffix == ".gz":
        with gzip.open(path, "rb") as fh:
            frame = pl.read_csv(fh.read(), **opts).lazy()
    else:
        frame = pl.scan_csv(path, **opts)
    if ids is not None:
        frame = frame.filter(pl.col("tconst").is_in(list(ids)))
    return frame.collect()


def read_title_basics(path: Path | str, ids: Iterable[str] | None = None) -> pl.DataFrame:
    """``title.basics.tsv[.gz]`` with typed columns (years/runtime Int32, isAdult Boolean, genres
    kept as IMDb's comma-separated string; ``\\N`` → null). Values that do not parse become null.
    ``ids`` restricts the rows (read lazily, so the full 10M-row file is fine)."""
    df = _read_tsv(path, BASICS_COLUMNS, ids)
    return df.with_columns(
        pl.col("isAdult").cast(pl.Int8, strict=False).cast(pl.Boolean),
        pl.col("startYear").cast(pl.Int32, strict=False),
        pl.col("endYear").cast(pl.Int32, strict=False),
        pl.col("runtimeMinutes").cast(pl.Int32, strict=False),
    ).select(BASICS_COLUMNS)


def read_title_ratings(path: Path | str, ids: Iterable[str] | None = None) -> pl.DataFrame:
    """``title.ratings.tsv[.gz]``: tconst, averageRating (Float64), numVotes (Int64)."""
    df = _read_tsv(path, RATINGS_COLUMNS, ids)
    return df.with_columns(
        pl.col("averageRating").cast(pl.Float64, strict=False),
        pl.col("numVotes").cast(pl.Int64, strict=False),
    ).select(RATINGS_COLUMNS)


# --------------------------------------------------------------------------------------------
# Title pages
# --------------------------------------------------------------------------------------------
def _json_ld(root: Node) -> dict:
    for s in root.find_all("script"):
        if s.attrs.get("type", "").lower() != "application/ld+json":
            continue
        try:
            data = json.loads("".join(c for c in s.children if isinstance(c, str)))
        except ValueError:
            continue
        items = data if isinstance(data, list) else [data]
        for item in items:
            if isinstance(item, dict) and item.get("@type") in ("Movie", "TVSeries", "TVMovie", "CreativeWork", "VideoGame", "TVEpisode"):
                return item
    return {}


def _s(v: Any) -> str | None:
    if v is None:
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


def parse_certificates(parentalguide_html: str | None) -> list[str]:
    """Certificate strings as IMDb shows them, ``Country:Label`` plus ``::(note)`` when noted.

    Understands the labelled-list layout (``certificates-item`` with a country label and one
    entry per rating) and the inline layout (``Country:Label`` anchors followed by a note).
    """
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
    box = root.find(id="certificates")
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


def parse_imdb_title(
    index_html: str | None,
    plotsummary_html: str | None,
    parentalguide_html: str | None,
    basics_row: dict | None,
) -> ImdbRecord:
    """One :class:`ImdbRecord` from the dataset row (title.basics, optionally joined with
    title.ratings: ``averageRating``) and the three title pages (any may be empty). Dataset
    values win where both exist; pages fill the rest. Raises ``ValueError`` only when no IMDb id
    can be found at all."""
    row = dict(basics_row or {})
    root = parse_html(index_html)
    ld = _json_ld(root)
    imdb_id = _s(row.get("tconst"))
    if imdb_id is None:
        imdb_id, _status = canonical_imdb_id(_s(ld.get("url")))
    if imdb_id is None:
        raise ValueError("no IMDb id in the dataset row or the title page")
    title = _s(row.get("primaryTitle")) or _s(ld.get("name"))
    if title is None:
        t = root.find("title")
        title = re.sub(r"\s*\(\d{4}\)\s*-\s*IMDb\s*$", "", t.text()).strip() if t is not None else ""
    year = _int(row.get("startYear"))
    if year is None and _s(ld.get("datePublished")):
        year = _int(str(ld["datePublished"])[:4])
    runtime = _int(row.get("runtimeMinutes"))
    if runtime is None:
        runtime = _duration_min(ld.get("duration"))
    rating = _float(row.get("averageRating"))
    if rating is None and isinstance(ld.get("aggregateRating"), dict):
        rating = _float(ld["aggregateRating"].get("ratingValue"))
    genres_raw = row.get("genres")
    if isinstance(genres_raw, str) and genres_raw not in ("", "\\N"):
        genres = [g.strip() for g in genres_raw.split(",") if g.strip()]
    elif isinstance(genres_raw, list):
        genres = [str(g) for g in genres_raw]
    else:
        genres = _names(ld.get("genre"), person_only=False)
    keywords = _s(ld.get("keywords"))
    summaries, synopsis = _summaries(parse_html(plotsummary_html))
    plot = summaries[0] if summaries else _s(ld.get("description"))
    cast = _cast(root) or [CastMember(actor=n) for n in _names(ld.get("actor"))]
    return ImdbRecord(
        imdb_id=imdb_id,
        title=title or "",
        year=year,
        runtime_min=runtime,
        rating=rating,
        genres=genres,
        countries=_names(ld.get("countryOfOrigin"), person_only=False),
        languages=_names(ld.get("inLanguage"), person_only=False),
        topics=[k.strip() for k in keywords.split(",") if k.strip()] if keywords else [],
        plot=plot,
        synopsis=synopsis,
        certificates=parse_certificates(parentalguide_html),
        directors=_names(ld.get("director")),
        writers=_names(ld.get("creator")),
        cast=cast,
        raw_sha256=hashlib.sha256((index_html or "").encode("utf-8")).hexdigest() if index_html else None,
    )
