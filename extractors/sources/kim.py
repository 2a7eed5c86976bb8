"""Kids-in-Mind: per-letter index pages and review pages → records (SPEC A1, A9 reference counts).

Shapes (``../shared/realdata/live/MANIFEST.md`` §1, docs/sources.md "Kids-in-Mind"):

* **Index** ``<root>/<letter>.htm`` (``a`` … ``z``): a header ``Movie Reviews by Title | B`` in one
  ``div.et_pb_text_inner``, the list in the next one, one entry per film:
  ``<a href="/b/babel.htm" rel="noopener noreferrer">Babel</a> [2006] [R] – 8.7.6<br>`` (en dash,
  sometimes a hyphen; sometimes a foreign title in brackets or parentheses before the year, so the
  brackets are counted from the right; sort titles put leading articles last: "Abyss, The").
  Letter buttons (``/a.htm`` …) and the "latest reviews" sidebar (display titles, ``- S.V.L`` only)
  are not entries.
* **Review** ``<root>/<letter>/<slug>.htm`` (four slug styles; the letter is the sort title's
  first letter): ``<title>Title [Year] [Rating] - S.V.L``, a header line
  ``Title | Year | Rating | - S.V.L``, a synopsis ending in ``[h:mm]``, then one block per category
  — ``div.et_pb_text_inner`` with an ``<h2>`` (or ``<span>``) ``SEX/NUDITY 4`` and the text in the
  following ``<p>``; or ``<h2 id="sex">`` with the text in its next sibling — for SEX/NUDITY,
  VIOLENCE/GORE, LANGUAGE, SUBSTANCE USE, DISCUSSION TOPICS and MESSAGE. Older shapes (a
  ``SEX/NUDITY 3 - VIOLENCE/GORE 5 - LANGUAGE 7`` line, ``<p><strong>LANGUAGE 7</strong> - …``,
  ``MESSAGE: …``, ``Title (Year) [MPAA]`` headings) are read too.

Missing parts give ``None``; nothing raises on a damaged page.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from urllib.parse import urljoin, urlparse

from cinesub.records import KimRecord, LanguageContentReference
from extractors.sources._html import Node, parse_html

KIM_LETTERS = "abcdefghijklmnopqrstuvwxyz"
#: hosts of the real site: their links are re-rooted on the crawled root (a mirror or replay)
KIM_HOSTS = ("kids-in-mind.com", "www.kids-in-mind.com")

_DASH = "\u2013\u2014\\-"  # en dash, em dash, hyphen (escaped: safe anywhere in a character class)
_SVL = rf"[{_DASH}]\s*(?P<s>\d{{1,2}})\s*\.\s*(?P<v>\d{{1,2}})\s*\.\s*(?P<l>\d{{1,2}})"
#: ``Title | 2009 | PG-13 | - 4.6.5`` (the review page's header line)
_HEADER_LINE = re.compile(rf"^(?P<title>.+?)\s*\|\s*(?P<year>\d{{4}})\s*\|\s*(?P<mpaa>[^|]*?)\s*\|\s*{_SVL}\s*$")
_HEADING_FORMS = [
    re.compile(r"^(?P<title>.+?)\s*\((?P<year>\d{4})\)\s*(?:\[(?P<mpaa>[^\]]*)\])?"),
    re.compile(r"^(?P<title>.+?)\s*\[(?P<year>\d{4})\]\s*(?:\[(?P<mpaa>[^\]]*)\])?"),
    re.compile(r"^(?P<title>.+?)\s*\|\s*(?P<year>\d{4})\s*(?:\|\s*(?P<mpaa>[^|]+?)\s*)?(?:\||$)"),
]
_SVL_AFTER_BRACKET = re.compile(rf"\]\s*{_SVL}")
_RATINGS = re.compile(r"SEX/NUDITY\s*(\d+)\s*[-–—]\s*VIOLENCE/GORE\s*(\d+)\s*[-–—]\s*LANGUAGE\s*(\d+)", re.I)
_CATEGORIES = "SEX/NUDITY|VIOLENCE/GORE|LANGUAGE|SUBSTANCE USE|DISCUSSION TOPICS|MESSAGE"
_SECTION = re.compile(rf"^\s*({_CATEGORIES})\b\s*(\d+)?\s*[-–—:]?\s*(.*)$", re.S)
#: a block heading on its own: ``SEX/NUDITY 4``, ``MESSAGE``, ``MESSAGE:``
_HEADING_ALONE = re.compile(rf"^\s*({_CATEGORIES})\s*(\d{{1,2}})?\s*[-–—:]?\s*$")
_HEADING_TAGS = ("h1", "h2", "h3", "h4", "h5", "span", "strong", "b")
_RUNTIME = re.compile(r"\[(\d{1,2}):(\d{2})\]\s*$")
_COUNT_PATTERNS = {
    # real prose: "25 F-words and 2 sexual references", "1 F-word", "about 12 F-words and its derivatives"
    "f_words": re.compile(r"(\d+)\s+F-?words?\b", re.I),
    # "3 scatological terms", "1 scatological term"
    "scatological": re.compile(r"(\d+)\s+scatological", re.I),
    # "5 anatomical terms"
    "anatomical": re.compile(r"(\d+)\s+anatomical", re.I),
    # "9 mild obscenities", "1 mild obscenity"
    "mild": re.compile(r"(\d+)\s+mild\s+obscenit", re.I),
    # "14 religious exclamations"
    "religious": re.compile(r"(\d+)\s+religious\s+exclamation", re.I),
}
_ARTICLE_LAST = re.compile(r"^(?P<rest>.+?),\s*(?P<art>The|A|An)$")


# --------------------------------------------------------------------------------------------
# URLs and ids
# --------------------------------------------------------------------------------------------
def kim_index_urls(root: str) -> list[str]:
    """The 26 per-letter index pages of a KIM site root (``https://kids-in-mind.com/a.htm`` …)."""
    root = root.rstrip("/")
    return [f"{root}/{letter}.htm" for letter in KIM_LETTERS]


def kim_id_from_url(url: str) -> str:
    """``https://kids-in-mind.com/b/babydriver.htm`` → ``"b/babydriver"`` (the letter folder and
    the slug; the mirror stores the page at ``kim/b/babydriver.html``). A URL without a one-letter
    folder gives the bare slug."""
    path = urlparse(url).path if "://" in url else url
    parts = [p for p in PurePosixPath(path).parts if p not in ("/", "")]
    if not parts:
        return ""
    stem = re.sub(r"\.html?$", "", parts[-1], flags=re.I)
    if len(parts) >= 2 and re.fullmatch(r"[a-z0-9]", parts[-2], re.I):
        return f"{parts[-2]}/{stem}"
    return stem


def _site_root(page_url: str) -> str:
    """The site root a page belongs to: the folder of a letter page (``…/kim/q.htm`` → ``…/kim``)."""
    base = page_url.split("#", 1)[0].split("?", 1)[0]
    return base.rsplit("/", 1)[0] if "/" in base.split("://", 1)[-1] else base


def _review_id(href: str, page_url: str, root: str) -> str | None:
    """``"<letter>/<slug>"`` when ``href`` (absolute or relative) is a review link of this site."""
    href = (href or "").strip()
    if not href or href.startswith(("#", "mailto:", "javascript:")):
        return None
    absolute = urljoin(page_url, href).split("#", 1)[0].split("?", 1)[0]
    u, r = urlparse(absolute), urlparse(root)
    if u.netloc.lower() == r.netloc.lower():
        prefix = r.path.rstrip("/")
    elif u.netloc.lower() in KIM_HOSTS:
        prefix = ""  # a link to the real site from a replay or mirror of it
    else:
        return None
    if u.path.startswith(prefix + "/"):
        rest = u.path[len(prefix) + 1:]
    elif re.fullmatch(r"/[a-z0-9]/[^/]+\.html?", u.path, re.I):
        rest = u.path[1:]  # KIM's root-relative link on a replay that serves the site under a prefix
    else:
        return None
    m = re.fullmatch(r"([a-z0-9])/([^/]+)\.html?", rest, re.I)
    return f"{m.group(1)}/{m.group(2)}" if m else None


# --------------------------------------------------------------------------------------------
# Index pages
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class KimIndexEntry:
    """One film of a per-letter index page."""

    url: str  #: the review page on the crawled root: ``<root>/<letter>/<slug>.htm``
    kim_id: str  #: ``"<letter>/<slug>"``
    title: str  #: as listed (sort title: "Abyss, The")
    year: int | None
    mpaa: str | None
    sex: int | None
    violence: int | None
    language: int | None
    foreign_title: str | None = None  #: "(L'illusionniste)" / "[…]" before the year, without brackets

    @property
    def display_title(self) -> str:
        """The title with a trailing article moved to the front ("Abyss, The" → "The Abyss")."""
        return display_title(self.title)


def display_title(sort_title: str) -> str:
    m = _ARTICLE_LAST.match(sort_title.strip())
    return f"{m.group('art')} {m.group('rest')}" if m else sort_title.strip()


_ENTRY_TAIL = re.compile(
    rf"^(?P<pre>.*?)\s*(?:\[\s*(?P<year>\d{{4}})\s*\]\s*)?(?:\[(?P<mpaa>[^\[\]]*)\]\s*)?(?:{_SVL})?\s*$", re.S)


def _split_entry(text: str) -> tuple[str, int | None, str | None, tuple[int | None, int | None, int | None]]:
    """``"(L'illusionniste) [2010] [PG] – 1.2.0"`` → (pre, year, mpaa, (s, v, l)), read from the right."""
    m = _ENTRY_TAIL.match(" ".join(text.split()))
    if not m:  # the pattern always matches; kept for safety
        return text.strip(), None, None, (None, None, None)
    svl = tuple(int(m.group(k)) if m.group(k) is not None else None for k in ("s", "v", "l"))
    mpaa = " ".join((m.group("mpaa") or "").split()) or None
    if mpaa is not None and m.group("year") is None and re.fullmatch(r"\d{4}", mpaa):
        return m.group("pre").strip(), int(mpaa), None, svl  # "[2010] – 1.2.0": the year only
    return m.group("pre").strip(), int(m.group("year")) if m.group("year") else None, mpaa, svl  # type: ignore[return-value]


def _tokens(node: Node, out: list) -> None:
    """Document-order tokens of a list container: ``("a", node)``, ``("br",)``, ``("text", s)``."""
    for c in node.children:
        if isinstance(c, str):
            out.append(("text", c))
        elif c.tag == "a":
            out.append(("a", c))
        elif c.tag == "br" or c.tag in ("p", "div", "li", "ul", "hr"):
            out.append(("br",))
            _tokens(c, out)
            if c.tag != "br":
                out.append(("br",))
        elif c.tag in ("script", "style"):
            continue
        else:
            _tokens(c, out)


def _index_list(root: Node) -> Node | None:
    """The ``div.et_pb_text_inner`` after the ``Movie Reviews by Title | X`` header."""
    inners = root.find_all("div", class_="et_pb_text_inner")
    for i, n in enumerate(inners):
        if re.match(r"\s*Movie Reviews by Title\b", n.text(), re.I):
            for later in inners[i + 1:]:
                if later is not n and not _is_inside(later, n):
                    return later
            return None
    return None


def _is_inside(node: Node, ancestor: Node) -> bool:
    p = node.parent
    while p is not None:
        if p is ancestor:
            return True
        p = p.parent
    return False


def parse_kim_index(html: str, url: str) -> list[KimIndexEntry]:
    """The review entries of one per-letter index page fetched from ``url``.

    The list is the ``div.et_pb_text_inner`` after the ``Movie Reviews by Title`` header; a page
    without that header (another markup) falls back to every review link followed by a bracketed
    year. Letter buttons and the latest-reviews sidebar never count. Entries are unique by
    ``kim_id`` (first kept); their ``url`` is rebuilt on the root ``url`` belongs to.
    """
    root = parse_html(html)
    site = _site_root(url)
    container = _index_list(root)
    strict = container is None
    tokens: list = []
    _tokens(container if container is not None else root, tokens)
    out: list[KimIndexEntry] = []
    seen: set[str] = set()
    for i, tok in enumerate(tokens):
        if tok[0] != "a":
            continue
        kim_id = _review_id(tok[1].attrs.get("href", ""), url, site)
        if kim_id is None:
            continue
        tail = []
        for nxt in tokens[i + 1:]:
            if nxt[0] != "text":
                break
            tail.append(nxt[1])
        anchor_text = " ".join(tok[1].text().split())
        tail_text = " ".join("".join(tail).split())
        if not tail_text and "[" in anchor_text:  # "Title [2006] [R] - 8.7.6" inside the anchor
            anchor_text, year, mpaa, svl = _split_entry(anchor_text)
            foreign = None
        else:
            pre, year, mpaa, svl = _split_entry(tail_text)
            foreign = pre.strip("()[] ") or None
        if strict and year is None:
            continue  # without the list container, only "[YYYY]" entries are index entries
        if kim_id in seen or not anchor_text:
            continue
        seen.add(kim_id)
        out.append(KimIndexEntry(url=f"{site}/{kim_id}.htm", kim_id=kim_id, title=anchor_text, year=year,
                                 mpaa=mpaa, sex=svl[0], violence=svl[1], language=svl[2], foreign_title=foreign))
    return out


# --------------------------------------------------------------------------------------------
# Review pages
# --------------------------------------------------------------------------------------------
def _canonical(root: Node) -> str | None:
    for link in root.find_all("link"):
        if link.attrs.get("rel", "").lower() == "canonical" and link.attrs.get("href"):
            return link.attrs["href"].strip()
    return None


def _header(root: Node) -> tuple[str | None, int | None, str | None, tuple[int, int, int] | None]:
    """Title, year, rating and S.V.L from the header line, the headings or ``<title>``."""
    for line in root.text().split("\n"):
        m = _HEADER_LINE.match(line.strip())
        if m:
            return (m.group("title").strip(), int(m.group("year")), m.group("mpaa").strip() or None,
                    (int(m.group("s")), int(m.group("v")), int(m.group("l"))))
    candidates = [n.text() for n in root.find_all("h1")]
    t = root.find("title")
    title_text = t.text() if t is not None else ""
    if title_text:
        candidates.append(title_text)
    svl = None
    sm = _SVL_AFTER_BRACKET.search(title_text)
    if sm:
        svl = (int(sm.group("s")), int(sm.group("v")), int(sm.group("l")))
    for text in candidates:
        text = text.split("\n", 1)[0].strip()
        for form in _HEADING_FORMS:
            m = form.match(text)
            if m:
                mpaa = (m.group("mpaa") or "").strip() or None
                return m.group("title").strip(), int(m.group("year")), mpaa, svl
    first = next((c.split("\n", 1)[0].strip() for c in candidates if c.strip()), None)
    return first, None, None, svl


def _imdb_link(root: Node) -> str | None:
    anchors = root.find_all("a")
    for a in anchors:
        if a.text().strip().lower() == "imdb" and a.attrs.get("href"):
            return a.attrs["href"].strip()
    for a in anchors:
        href = a.attrs.get("href", "")
        if re.search(r"imdb\.[a-z.]+/title", href, re.I):
            return href.strip()
    return None


def _strip_lead(text: str) -> str:
    return re.sub(rf"^[\s{_DASH}:]+", "", text).strip()


def _following_text(node: Node) -> str:
    """The description after a block heading: its following ``<p>`` siblings (and bare text) up to
    the next heading; failing that, the first following sibling with text."""
    parent = node.parent
    if parent is None:
        return ""
    sibs = parent.children
    idx = next(i for i, c in enumerate(sibs) if c is node)
    parts: list[str] = []
    first_other = ""
    for c in sibs[idx + 1:]:
        if isinstance(c, str):
            if c.strip():
                parts.append(c)
            continue
        text = c.text()
        if _HEADING_ALONE.match(text.replace("\n", " ")) or _SECTION.match(text) and c.tag in _HEADING_TAGS:
            break
        if c.tag == "p" or c.tag == "br":
            parts.append("\n" if c.tag == "br" else "\n" + c.raw_text() + "\n")
        elif not first_other and text.strip() and c.tag not in ("script", "style"):
            first_other = text
    text = _clean_block("".join(parts))
    return text or _clean_block(first_other)


def _clean_block(s: str) -> str:
    lines = [" ".join(ln.split()) for ln in s.split("\n")]
    return _strip_lead("\n".join(ln for ln in lines if ln))


def _sections(root: Node) -> dict[str, tuple[int | None, str]]:
    sections: dict[str, tuple[int | None, str]] = {}
    # (1) a heading element on its own (h2 / h2#sex / span / strong) and the text after it
    for n in root.find_all(pred=lambda x: x.tag in _HEADING_TAGS):
        m = _HEADING_ALONE.match(n.text().replace("\n", " "))
        if not m:
            continue
        name = m.group(1).upper()
        if name in sections:
            continue
        desc, at = _following_text(n), n
        while not desc and at.parent is not None and at.parent.parent is not None \
                and at.parent.text() == at.text():  # <p><span>SEX/NUDITY 4</span></p><p>…</p>
            at = at.parent
            desc = _following_text(at)
        sections[name] = (int(m.group(2)) if m.group(2) else None, desc)
    # (2) a paragraph that starts with the category (text-only shape)
    for p in root.find_all("p"):
        m = _SECTION.match(p.text().replace("\n", " "))
        if m and m.group(1).upper() not in sections:
            sections[m.group(1).upper()] = (int(m.group(2)) if m.group(2) else None, m.group(3).strip())
    return sections


def kim_runtime_minutes(html: str) -> int | None:
    """The running time ``[h:mm]`` that ends the synopsis paragraph, in minutes."""
    for p in parse_html(html).find_all("p"):
        m = _RUNTIME.search(p.text())
        if m:
            return int(m.group(1)) * 60 + int(m.group(2))
    return None


def parse_kim_language_counts(summary: str | None) -> dict[str, int]:
    """Category counts printed in a KIM LANGUAGE paragraph (absent category → 0).

    Keys: ``f_words``, ``scatological``, ``anatomical``, ``mild``, ``religious``.
    """
    text = " ".join((summary or "").split())
    out = {}
    for key, pat in _COUNT_PATTERNS.items():
        m = pat.search(text)
        out[key] = int(m.group(1)) if m else 0
    return out


def parse_kim(html: str, url: str) -> KimRecord:
    """Parse one Kids-in-Mind review page; ``url`` is where it was fetched (the page's canonical
    link, when present, becomes ``KimRecord.url``; ``kim_id`` is ``"<letter>/<slug>"`` of ``url``).

    The language rating is the L of the header's S.V.L (else of ``<title>``, else the
    ``SEX/NUDITY … LANGUAGE n`` line, else the LANGUAGE block's score); the LANGUAGE block's text is
    the summary, the MESSAGE block's the key message."""
    root = parse_html(html)
    canonical = _canonical(root)
    page_url = canonical or url
    title, year, _mpaa, svl = _header(root)
    sections = _sections(root)
    language_rating = svl[2] if svl else None
    if language_rating is None:
        m = _RATINGS.search(root.text().replace("\n", " "))
        if m:
            language_rating = int(m.group(3))
    lang = sections.get("LANGUAGE")
    if language_rating is None and lang and lang[0] is not None:
        language_rating = lang[0]
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
