"""Common Sense Media review pages → :class:`cinesub.records.CsmRecord` (SPEC A1, A10).

The page shape: ``<h1>`` title (or ``<title>Title Movie Review | Common Sense Media</title>``), an
age label ``age 13+``, "Parents Need to Know", "What's the Story?" (the storyline) and movie
details with the release date and an embedded IMDb link. Missing parts give ``None``.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import PurePosixPath
from urllib.parse import urlparse

from cinesub.records import CsmRecord
from extractors.sources._html import Node, parse_html

_AGE = re.compile(r"\bage\s*(\d{1,2})\s*\+", re.I)
_YEAR = re.compile(r"(?:In theaters|Release date|Release year|On DVD or streaming)\s*:?\s*(?:[A-Za-z]+\.?\s+\d{1,2},\s*)?(\d{4})", re.I)
_TITLE_SUFFIX = re.compile(r"\s*(?:Movie|TV|Book|Game)?\s*Review\s*\|\s*Common Sense Media\s*$", re.I)


def csm_id_from_url(url: str) -> str:
    name = PurePosixPath(urlparse(url).path).name or url.rstrip("/").rsplit("/", 1)[-1]
    return re.sub(r"\.html?$", "", name, flags=re.I)


def _section_text(root: Node, section_id: str, heading: str) -> str | None:
    sec = root.find(id=section_id)
    if sec is None:
        for h in root.find_all(pred=lambda n: n.tag in ("h2", "h3")):
            if h.text().strip().lower() == heading.lower():
                sec = h.parent
                break
    if sec is None:
        return None
    parts = [n.text() for n in sec.find_all("p")]
    if not parts:
        text = sec.text()
        lines = [ln for ln in text.split("\n") if ln.strip().lower() != heading.lower()]
        parts = ["\n".join(lines)]
    text = "\n\n".join(p for p in parts if p.strip()).strip()
    return text or None


def parse_csm(html: str, url: str) -> CsmRecord:
    """Parse one Common Sense Media review page (``csm_id`` is the page slug)."""
    root = parse_html(html)
    canonical = None
    for link in root.find_all("link"):
        if link.attrs.get("rel", "").lower() == "canonical" and link.attrs.get("href"):
            canonical = link.attrs["href"].strip()
    page_url = canonical or url
    h1 = root.find("h1")
    title = h1.text().split("\n", 1)[0].strip() if h1 is not None else ""
    if not title:
        t = root.find("title")
        title = _TITLE_SUFFIX.sub("", t.text()).strip() if t is not None else ""
    age_node = root.find(pred=lambda n: n.has_class("rating__age"))
    m = _AGE.search(age_node.text() if age_node is not None else root.text())
    age = f"{int(m.group(1))}+" if m else None
    y = _YEAR.search(root.text().replace("\n", " "))
    imdb = None
    for a in root.find_all("a"):
        href = a.attrs.get("href", "")
        if "imdb.com" in href.lower():
            imdb = href.strip()
            break
    return CsmRecord(
        csm_id=csm_id_from_url(url or page_url),
        url=page_url,
        title=title,
        year=int(y.group(1)) if y else None,
        imdb_link=imdb,
        age_suitability=age,
        storyline=_section_text(root, "review-view-story", "What's the Story?"),
        raw_sha256=hashlib.sha256((html or "").encode("utf-8")).hexdigest(),
    )
