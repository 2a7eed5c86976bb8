"""Common Sense Media: the paginated movie-review index and review pages → records (SPEC A1, A10).

No CSM page was ever captured (``../shared/realdata/live/MANIFEST.md`` §2), so every shape the
sources report is read (docs/sources.md "Common Sense Media"):

* **Index** ``<root>/movie-reviews``: review links ``/movie-reviews/<slug>``; the next page from
  ``rel="next"`` (``<a>`` or ``<link>``), a pager link reading "Next"/"next page", or the lowest
  ``?page=N`` link above the current page.
* **Review** ``<root>/movie-reviews/<slug>``, three page generations: (A) labelled bullets
  ``Rated: PG-13`` / ``Release Year: 2009`` / ``Running Time: 132 minutes``; (B) bare bullets
  ``PG-13`` ``2009`` ``132 minutes`` and "Parents say"/"Kids say" ages; (C) "Parents' Guide to"
  + title, the CSM age, one line ``Movie R 2003 100 minutes`` and "Community Reviews" ages. The
  CSM age is ``span.rating__age`` or the first ``age N+`` that is not a parents'/kids'/community
  age. The IMDb link is an ``<a href>`` to imdb.com or the JSON-LD ``sameAs`` (string or list).
  The storyline is the "What's the story?" section. Missing parts give ``None``.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import parse_qs, urljoin, urlparse

from cinesub.records import CsmRecord
from extractors.sources._html import Node, parse_html

#: hosts of the real site: their links are re-rooted on the crawled root (a mirror or replay)
CSM_HOSTS = ("www.commonsensemedia.org", "commonsensemedia.org")

_AGE = re.compile(r"\bage\s*(\d{1,2})\s*\+", re.I)
#: an ``age N+`` preceded by these words is the parents'/kids'/community age, not CSM's
_NOT_CSM_AGE = re.compile(r"(parents?\s+say|kids\s+say|community\s+reviews?|parent\s+reviews?)\W*(\(\d+\)\W*)?$", re.I)
_YEAR = re.compile(r"(?:In theaters|Release date|Release year|On DVD or streaming|On streaming)\s*:?\s*"
                   r"(?:[A-Za-z]+\.?\s+\d{1,2},\s*)?(\d{4})", re.I)
_MPA = r"G|PG|PG-13|R|NC-17|NR|Not Rated|Unrated|TV-(?:Y7|Y|G|PG|14|MA)"
#: (C) ``Movie R 2003 100 minutes`` / (B) ``PG-13 2009 132 minutes``
_DETAILS = re.compile(rf"(?:\b(?:Movie|TV|Film)\s+)?(?<![\w-])(?P<mpa>{_MPA})(?![\w-])\s+(?P<year>(?:18|19|20)\d{{2}})\s+"
                      r"(?P<min>\d{2,3})\s*(?:minutes|mins?)\b", re.I)
#: (A) ``Rated: PG-13`` ``Release Year: 2009`` ``Running Time: 132 minutes``
_LABELLED = {
    "mpa": re.compile(rf"\b(?:Rated|MPAA rating|MPA rating)\s*:\s*(?P<v>{_MPA})(?![\w-])", re.I),
    "min": re.compile(r"\b(?:Running time|Run time)\s*:\s*(?P<v>\d{2,3})\s*min", re.I),
}
_TITLE_SUFFIX = re.compile(r"\s*(?:Movie|TV|Book|Game)?\s*Review\s*\|\s*Common Sense Media\s*$", re.I)
_GUIDE_PREFIX = re.compile(r"^\s*Parents[’']?\s*Guide\s+to\s*:?\s*", re.I)
_STORY = re.compile(r"^\s*What[’']s the story\??\s*$", re.I)


def csm_index_url(root: str) -> str:
    return f"{root.rstrip('/')}/movie-reviews"


def csm_id_from_url(url: str) -> str:
    name = PurePosixPath(urlparse(url).path).name or url.rstrip("/").rsplit("/", 1)[-1]
    return re.sub(r"\.html?$", "", name, flags=re.I)


# --------------------------------------------------------------------------------------------
# Index pages
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CsmIndexPage:
    review_urls: list[str]  #: ``<root>/movie-reviews/<slug>``, in page order, unique
    next_url: str | None  #: the next index page, ``None`` on the last


def _page_no(url: str) -> int:
    try:
        return int(parse_qs(urlparse(url).query).get("page", ["0"])[0])
    except ValueError:
        return 0


def parse_csm_index(html: str, url: str) -> CsmIndexPage:
    """The review links of one index page fetched from ``url`` and the next page's URL."""
    root = parse_html(html)
    page = urlparse(url)
    base_path = page.path.rstrip("/")
    prefix = base_path[: -len("/movie-reviews")] if base_path.endswith("/movie-reviews") else \
        base_path.split("/movie-reviews", 1)[0]
    site = f"{page.scheme}://{page.netloc}{prefix}"
    reviews: list[str] = []
    seen: set[str] = set()
    next_url: str | None = None
    pager_next: str | None = None
    numbered: list[tuple[int, str]] = []
    here = _page_no(url)
    for n in root.find_all(pred=lambda x: x.tag in ("a", "link")):
        href = n.attrs.get("href", "").strip()
        if not href or href.startswith(("#", "javascript:", "mailto:")):
            continue
        absolute = urljoin(url, href).split("#", 1)[0]
        u = urlparse(absolute)
        rels = n.attrs.get("rel", "").lower().split()
        if "next" in rels and next_url is None:
            next_url = absolute
            continue
        if n.tag == "link":
            continue
        label = " ".join(n.text().split()).lower()
        label += " " + n.attrs.get("aria-label", "").lower() + " " + n.attrs.get("title", "").lower()
        same_site = u.netloc.lower() == page.netloc.lower()
        path_prefix = prefix if same_site else ("" if u.netloc.lower() in CSM_HOSTS else None)
        if path_prefix is None:
            continue
        rest = u.path[len(path_prefix):] if u.path.startswith(path_prefix + "/") else None
        if rest is None:
            continue
        m = re.fullmatch(r"/movie-reviews/([A-Za-z0-9][A-Za-z0-9._~%-]*)/?", rest)
        if m:
            rev = f"{site}/movie-reviews/{m.group(1)}"
            if rev not in seen:
                seen.add(rev)
                reviews.append(rev)
            continue
        if rest.rstrip("/") == "/movie-reviews" and "page" in parse_qs(u.query):
            if re.search(r"\bnext\b", label) and pager_next is None:
                pager_next = absolute
            numbered.append((_page_no(absolute), absolute))
    if next_url is None:
        next_url = pager_next
    if next_url is None:
        later = sorted((no, link) for no, link in numbered if no > here)
        next_url = later[0][1] if later else None
    if next_url is not None and next_url.split("#", 1)[0] == url.split("#", 1)[0]:
        next_url = None
    return CsmIndexPage(review_urls=reviews, next_url=next_url)


# --------------------------------------------------------------------------------------------
# Review pages
# --------------------------------------------------------------------------------------------
def _json_ld(root: Node) -> list[Any]:
    out: list[Any] = []
    for s in root.find_all("script"):
        if "ld+json" not in s.attrs.get("type", "").lower():
            continue
        raw = "".join(c for c in s.children if isinstance(c, str))
        try:
            out.append(json.loads(raw))
        except ValueError:
            continue
    return out


def _walk(obj: Any):
    if isinstance(obj, dict):
        yield obj
        for v in obj.values():
            yield from _walk(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _walk(v)


def _same_as_imdb(blocks: list[Any]) -> str | None:
    for obj in _walk(blocks):
        same = obj.get("sameAs")
        for v in [same] if isinstance(same, str) else (same if isinstance(same, list) else []):
            if isinstance(v, str) and "imdb." in v.lower():
                return v.strip()
    return None


def _ld_title(blocks: list[Any]) -> str | None:
    for obj in _walk(blocks):
        item = obj.get("itemReviewed")
        if isinstance(item, dict) and isinstance(item.get("name"), str) and item["name"].strip():
            return item["name"].strip()
    return None


@dataclass(frozen=True)
class CsmDetails:
    mpa_rating: str | None
    year: int | None
    runtime_min: int | None


def csm_details(text: str) -> CsmDetails:
    """MPA rating, year and running time from a page's text (layouts A, B, C and the old labels)."""
    flat = " ".join(text.split())
    mpa = year = minutes = None
    m = _DETAILS.search(flat)
    if m:
        mpa, year, minutes = m.group("mpa"), int(m.group("year")), int(m.group("min"))
    y = _YEAR.search(flat)
    if year is None and y:
        year = int(y.group(1))
    if mpa is None and (lm := _LABELLED["mpa"].search(flat)):
        mpa = lm.group("v")
    if minutes is None and (lm := _LABELLED["min"].search(flat)):
        minutes = int(lm.group("v"))
    return CsmDetails(mpa_rating=mpa, year=year, runtime_min=minutes)


def csm_age(root: Node) -> str | None:
    """The CSM age (``"13+"``): ``span.rating__age``, else the first ``age N+`` of the page that
    does not follow "Parents say", "Kids say" or "Community Reviews"."""
    node = root.find(pred=lambda n: n.has_class("rating__age"))
    if node is not None and (m := _AGE.search(node.text())):
        return f"{int(m.group(1))}+"
    body = root.find("body") or root
    flat = " ".join(body.text().split())
    for m in _AGE.finditer(flat):
        if _NOT_CSM_AGE.search(flat[max(0, m.start() - 40): m.start()]):
            continue
        if not re.match(r"\s*Based on\b", flat[m.end():], re.I):  # "age 14+ Based on 9 reviews"
            return f"{int(m.group(1))}+"
    return None


def _title(root: Node, blocks: list[Any]) -> str:
    h1 = root.find("h1")
    if h1 is not None:
        lines = [ln.strip() for ln in h1.text().split("\n") if ln.strip()]
        text = " ".join(lines)
        stripped = _GUIDE_PREFIX.sub("", text).strip()
        if stripped:
            return stripped
    t = root.find("title")
    title = _TITLE_SUFFIX.sub("", t.text()).strip() if t is not None else ""
    title = _GUIDE_PREFIX.sub("", title).strip()
    return title or _ld_title(blocks) or ""


def _is_heading(n: Node) -> bool:
    return n.tag in ("h1", "h2", "h3", "h4", "h5")


def _story(root: Node) -> str | None:
    sec = root.find(id="review-view-story")
    heading = None
    if sec is None:
        heading = next((h for h in root.find_all(pred=lambda n: _is_heading(n) or n.tag in ("strong", "b"))
                        if _STORY.match(h.text().replace("\n", " "))), None)
        if heading is None:
            return None
        parent = heading.parent
        assert parent is not None
        # the heading's own section when it has one; else the siblings up to the next heading
        if sum(1 for c in parent.children if isinstance(c, Node) and _is_heading(c)) <= 1:
            sec = parent
    if sec is not None:
        parts = [n.text() for n in sec.find_all("p")]
        if not parts:
            lines = [ln for ln in sec.text().split("\n") if not _STORY.match(ln)]
            parts = ["\n".join(lines)]
    else:
        assert heading is not None and heading.parent is not None
        sibs = heading.parent.children
        idx = next(i for i, c in enumerate(sibs) if c is heading)
        parts = []
        for c in sibs[idx + 1:]:
            if isinstance(c, Node) and _is_heading(c):
                break
            parts.append(c if isinstance(c, str) else c.text())
    text = "\n\n".join(p.strip() for p in parts if p.strip()).strip()
    return text or None


def _imdb_href(root: Node) -> str | None:
    for a in root.find_all("a"):
        href = a.attrs.get("href", "")
        if "imdb.com" in href.lower():
            return href.strip()
    return None


def parse_csm(html: str, url: str) -> CsmRecord:
    """Parse one Common Sense Media review page (``csm_id`` is the page slug)."""
    root = parse_html(html)
    canonical = None
    for link in root.find_all("link"):
        if link.attrs.get("rel", "").lower() == "canonical" and link.attrs.get("href"):
            canonical = link.attrs["href"].strip()
    page_url = canonical or url
    blocks = _json_ld(root)
    body = root.find("body") or root
    details = csm_details(body.text())
    return CsmRecord(
        csm_id=csm_id_from_url(url or page_url),
        url=page_url,
        title=_title(root, blocks),
        year=details.year,
        imdb_link=_imdb_href(root) or _same_as_imdb(blocks),
        age_suitability=csm_age(root),
        storyline=_story(root),
        raw_sha256=hashlib.sha256((html or "").encode("utf-8")).hexdigest(),
    )
