"""Kids-in-Mind review pages → :class:`cinesub.records.KimRecord` (SPEC A1, A9 reference counts).

The page shape: a heading ``Title (Year) [MPAA]`` (older pages: ``Title [Year] [MPAA] - s.v.l`` or
``Title | Year | MPAA | s.v.l`` in the heading or ``<title>``), a ratings line
``SEX/NUDITY 3 - VIOLENCE/GORE 5 - LANGUAGE 7``, an ``IMDb`` link, one paragraph per category
(``LANGUAGE 7 - about 25 F-words and its derivatives, ...``) and ``MESSAGE: ...``.
Missing parts give ``None``; nothing raises on a damaged page.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import PurePosixPath
from urllib.parse import urlparse

from cinesub.records import KimRecord, LanguageContentReference
from extractors.sources._html import Node, parse_html

_HEADING_FORMS = [
    re.compile(r"^(?P<title>.+?)\s*\((?P<year>\d{4})\)\s*(?:\[(?P<mpaa>[^\]]*)\])?"),
    re.compile(r"^(?P<title>.+?)\s*\[(?P<year>\d{4})\]\s*(?:\[(?P<mpaa>[^\]]*)\])?"),
    re.compile(r"^(?P<title>.+?)\s*\|\s*(?P<year>\d{4})\s*(?:\|\s*(?P<mpaa>[^|]+?)\s*)?(?:\||$)"),
]
_RATINGS = re.compile(r"SEX/NUDITY\s*(\d+)\s*[-–—]\s*VIOLENCE/GORE\s*(\d+)\s*[-–—]\s*LANGUAGE\s*(\d+)", re.I)
_SECTION = re.compile(r"^\s*(SEX/NUDITY|VIOLENCE/GORE|LANGUAGE|SUBSTANCE USE|DISCUSSION TOPICS|MESSAGE)\b\s*(\d+)?\s*[-–—:]?\s*(.*)$", re.S)
_COUNT_PATTERNS = {
    "f_words": re.compile(r"(\d+)\s+F-words?", re.I),
    "scatological": re.compile(r"(\d+)\s+scatological", re.I),
    "anatomical": re.compile(r"(\d+)\s+anatomical", re.I),
    "mild": re.compile(r"(\d+)\s+mild\s+obscenit", re.I),
    "religious": re.compile(r"(\d+)\s+religious\s+exclamation", re.I),
}


def kim_id_from_url(url: str) -> str:
    name = PurePosixPath(urlparse(url).path).name or url.rstrip("/").rsplit("/", 1)[-1]
    stem = re.sub(r"\.html?$", "", name, flags=re.I)
    return re.sub(r"-parents-guide$", "", stem)


def _canonical(root: Node) -> str | None:
    for link in root.find_all("link"):
        if link.attrs.get("rel", "").lower() == "canonical" and link.attrs.get("href"):
            return link.attrs["href"].strip()
    return None


def _title_year(root: Node) -> tuple[str | None, int | None, str | None]:
    candidates = [n.text() for n in root.find_all("h1")]
    t = root.find("title")
    if t is not None:
        candidates.append(t.text())
    for text in candidates:
        text = text.split("\n", 1)[0].strip()
        for form in _HEADING_FORMS:
            m = form.match(text)
            if m:
                mpaa = (m.group("mpaa") or "").strip() or None
                return m.group("title").strip(), int(m.group("year")), mpaa
    first = next((c.split("\n", 1)[0].strip() for c in candidates if c.strip()), None)
    return first, None, None


def _imdb_link(root: Node) -> str | None:
    anchors = root.find_all("a")
    for a in anchors:
        if a.text().strip().lower() == "imdb" and a.attrs.get("href"):
            return a.attrs["href"].strip()
    for a in anchors:
        href = a.attrs.get("href", "")
        if "imdb.com/title" in href.lower() or "imdb.com/Title" in href:
            return href.strip()
    return None


def parse_kim_language_counts(summary: str | None) -> dict[str, int]:
    """Category counts printed in a KIM LANGUAGE paragraph (absent category → 0).

    Keys: ``f_words``, ``scatological``, ``anatomical``, ``mild``, ``religious``.
    """
    text = summary or ""
    out = {}
    for key, pat in _COUNT_PATTERNS.items():
        m = pat.search(text)
        out[key] = int(m.group(1)) if m else 0
    return out


def parse_kim(html: str, url: str) -> KimRecord:
    """Parse one Kids-in-Mind review page; ``url`` is where it was fetched (the page's canonical
    link, when present, becomes ``KimRecord.url``; ``kim_id`` is the page's slug)."""
    root = parse_html(html)
    canonical = _canonical(root)
    page_url = canonical or url
    title, year, _mpaa = _title_year(root)
    sections: dict[str, tuple[int | None, str]] = {}
    for p in root.find_all("p"):
        m = _SECTION.match(p.text().replace("\n", " "))
        if m and m.group(1).upper() not in sections:
            score = int(m.group(2)) if m.group(2) else None
            sections[m.group(1).upper()] = (score, m.group(3).strip())
    language_rating = None
    m = _RATINGS.search(root.text().replace("\n", " "))
    if m:
        language_rating = int(m.group(3))
    lang = sections.get("LANGUAGE")
    if lang and lang[0] is not None:
        language_rating = lang[0] if language_rating is None else language_rating
    summary = lang[1] if lang and lang[1] else None
    message = sections.get("MESSAGE", (None, ""))[1] or None
    return KimRecord(
        kim_id=kim_id_from_url(url or page_url),
        url=page_url,
        title=title or "",
        year=year,
        imdb_link=_imdb_link(root),
        key_message=message,
        language_content=LanguageContentReference(rating=language_rating, summary=summary, source=page_url),
        raw_sha256=hashlib.sha256((html or "").encode("utf-8")).hexdigest(),
    )
