"""A tiny, forgiving DOM over :mod:`html.parser` — enough to query the well-defined page shapes
of the review sites and IMDb without a third-party HTML library.

Unclosed or mis-nested tags are closed implicitly (like browsers do for the common cases), so a
damaged page still yields a tree; nothing here raises on bad markup.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
BLOCK = {"p", "div", "li", "ul", "ol", "tr", "td", "section", "h1", "h2", "h3", "h4", "table", "article", "header"}
_WS = re.compile(r"[ \t\r\f\v\u00a0]+")
_SRC_WS = re.compile(r"[\s\u00a0]+")


class Node:
    __slots__ = ("tag", "attrs", "children", "parent")

    def __init__(self, tag: str, attrs: dict[str, str], parent: Node | None):
        self.tag = tag
        self.attrs = attrs
        self.children: list[Node | str] = []
        self.parent = parent

    # -- queries ---------------------------------------------------------------------------------
    def iter(self) -> Iterator[Node]:
        for c in self.children:
            if isinstance(c, Node):
                yield c
                yield from c.iter()

    def find_all(self, tag: str | None = None, pred: Callable[[Node], bool] | None = None, **attrs: str) -> list[Node]:
        out = []
        for n in self.iter():
            if tag is not None and n.tag != tag:
                continue
            if any(not _attr_match(n, k, v) for k, v in attrs.items()):
                continue
            if pred is not None and not pred(n):
                continue
            out.append(n)
        return out

    def find(self, tag: str | None = None, pred: Callable[[Node], bool] | None = None, **attrs: str) -> Node | None:
        found = self.find_all(tag, pred, **attrs)
        return found[0] if found else None

    def has_class(self, cls: str) -> bool:
        return cls in self.attrs.get("class", "").split()

    # -- text ------------------------------------------------------------------------------------
    def raw_text(self) -> str:
        parts: list[str] = []
        self._collect(parts)
        return "".join(parts)

    def _collect(self, parts: list[str]) -> None:
        for c in self.children:
            if isinstance(c, str):
                parts.append(_SRC_WS.sub(" ", c))  # source line breaks are whitespace in HTML
            elif c.tag == "br":
                parts.append("\n")
            elif c.tag in ("script", "style"):
                continue
            else:
                if c.tag in BLOCK:
                    parts.append("\n")
                c._collect(parts)
                if c.tag in BLOCK:
                    parts.append("\n")

    def text(self) -> str:
        """Visible text, whitespace collapsed within lines, blank-line paragraph breaks kept."""
        return clean_text(self.raw_text())


def clean_text(s: str) -> str:
    lines = [_WS.sub(" ", ln).strip() for ln in s.replace("\r\n", "\n").split("\n")]
    out: list[str] = []
    blank = False
    for ln in lines:
        if ln:
            if blank and out:
                out.append("")
            out.append(ln)
            blank = False
        else:
            blank = True
    return "\n".join(out)


def _attr_match(n: Node, key: str, want: str) -> bool:
    key = key.rstrip("_").replace("_", "-")
    if key == "class":
        return n.has_class(want)
    return n.attrs.get(key) == want


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", {}, None)
        self.cur = self.root

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: (v or "") for k, v in attrs}, self.cur)
        self.cur.children.append(node)
        if tag not in VOID:
            self.cur = node

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: (v or "") for k, v in attrs}, self.cur)
        self.cur.children.append(node)

    def handle_endtag(self, tag: str) -> None:
        n: Node | None = self.cur
        while n is not None and n.tag != tag:
            n = n.parent
        if n is not None and n.parent is not None:
            self.cur = n.parent  # closes any unclosed descendants too

    def handle_data(self, data: str) -> None:
        self.cur.children.append(data)


def parse_html(html: str | None) -> Node:
    b = _Builder()
    try:
        b.feed(html or "")
        b.close()
    except Exception:  # html.parser is lenient; keep whatever was built
        pass
    return b.root
