"""Page-level access to Internet Archive scans: pure readers of IA's page-indexed derivatives
(issue 17; facts: ``realdata/live/MANIFEST.md`` §5, docs/hollywood.md "Page-level access").

* **Names from ``files[]``** (:func:`derivatives`): the derivative stem may differ from the
  identifier (the 2026 metadata capture: ``AMBIENTAIRSURVEY_00_SNSN_05900_…``), so every name is
  found by its suffix (and ``format``) among the item's file entries, never built from the id.
* **Page text** from a page-indexed source only: ``{stem}_hocr_searchtext.txt.gz`` +
  ``{stem}_hocr_pageindex.json.gz`` (:func:`hocr_pages`: one ``[text_start, text_end, xml_start,
  xml_end]`` per page, text offsets in **characters** of the decompressed search text), else
  ``{stem}_djvu.xml`` (:func:`djvu_xml_pages`: one ``<OBJECT>`` per page). ``_djvu.txt`` has no page
  separator (no form feed in real files): an item with only that gets reason ``no_page_index``.
* **Leaf alignment** (:func:`align_leaves`): text page *i* is the *i*-th leaf IA put in its access
  formats — ``_scandata.xml`` ``pageData/page[@leafNum]`` with ``addToAccessFormats`` not
  ``false`` (:func:`scandata_access_leaves`), else ``_page_numbers.json`` ``pages[].leafNum``
  (:func:`page_numbers`); a count that differs is reason ``leaf_page_mismatch`` for the item.
* **One page image** (:func:`jp2_member`): the member ``{zipstem}_jp2/{zipstem}_{NNNN}.jp2`` of
  ``{zipstem}_jp2.zip``, downloaded alone as ``/download/{id}/{zip}/{zipstem}_jp2%2F{zipstem}_{NNNN}.jp2``;
  :func:`fit_image` makes the bytes a model accepts inline (PNG when its base64 fits the limit,
  else downscaled JPEG).
"""

from __future__ import annotations

import gzip
import io
import json
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

#: reason codes of page-level access (recorded per item or page, never a silent skip)
PAGE_REASON_CODES: dict[str, str] = {
    "no_page_index": "the item has a _djvu.txt only: no hOCR page index or _djvu.xml to tell pages apart",
    "no_text_layer": "the item has no OCR derivative at all (image-only scan)",
    "bad_page_index": "the hOCR page index or _djvu.xml could not be read (malformed, offsets out of range)",
    "leaf_page_mismatch": "text pages and the scan data's access leaves differ in number",
    "no_scan_data": "neither _scandata.xml nor _page_numbers.json: leaves assumed 0..n-1",
    "no_page_images": "the item has no _jp2.zip (nor a PDF)",
    "image_too_large": "the page image cannot be brought under the inline limit",
}

#: (key, suffix, IA format) of the derivatives page-level access uses (metadata capture 2026)
DERIVATIVES: tuple[tuple[str, str, str], ...] = (
    ("searchtext", "_hocr_searchtext.txt.gz", "OCR Search Text"),
    ("pageindex", "_hocr_pageindex.json.gz", "OCR Page Index"),
    ("djvu_xml", "_djvu.xml", "Djvu XML"),
    ("djvu_txt", "_djvu.txt", "DjVuTXT"),
    ("hocr", "_hocr.html", "hOCR"),
    ("page_numbers", "_page_numbers.json", "Page Numbers JSON"),
    ("scandata", "_scandata.xml", "Scandata"),
    ("jp2_zip", "_jp2.zip", "Single Page Processed JP2 ZIP"),
)


class PageIndexError(ValueError):
    """A page-indexed derivative that cannot be read; ``reason`` is a :data:`PAGE_REASON_CODES` key."""

    def __init__(self, reason: str, detail: str):
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


def derivatives(files: list[dict[str, Any]], identifier: str | None = None) -> dict[str, str]:
    """``{key: file name}`` of the item's derivatives (keys of :data:`DERIVATIVES`, plus ``pdf``),
    found in the metadata API's ``files[]`` by suffix; when several match, the one whose stem is
    the identifier wins, else the first by name."""
    names = sorted(str(f.get("name", "")) for f in files)
    out: dict[str, str] = {}
    for key, suffix, _fmt in DERIVATIVES:
        hits = [n for n in names if n.endswith(suffix) and "/" not in n]
        if key == "djvu_xml":
            hits = [n for n in hits if not n.endswith("_hocr.html")]
        if hits:
            pref = [n for n in hits if identifier and n == f"{identifier}{suffix}"]
            out[key] = (pref or hits)[0]
    pdfs = [n for n in names if n.lower().endswith(".pdf") and "_text.pdf" not in n.lower()] or \
        [n for n in names if n.lower().endswith(".pdf")]
    if pdfs:
        out["pdf"] = pdfs[0]
    return out


def _gunzip_text(data: bytes) -> str:
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data.decode("utf-8")


def hocr_pages(searchtext: bytes | str, pageindex: bytes | str | list) -> list[str]:
    """Page texts of an hOCR search text and its page index (gzipped bytes, text or a parsed
    list): page *i* = ``text[start:end]`` with **character** offsets (archive-hocr-tools adds
    ``len(str)``). Offsets out of range or not increasing → :class:`PageIndexError`."""
    text = searchtext if isinstance(searchtext, str) else _gunzip_text(searchtext)
    if isinstance(pageindex, list):
        index = pageindex
    else:
        try:
            index = json.loads(pageindex if isinstance(pageindex, str) else _gunzip_text(pageindex))
        except (ValueError, UnicodeDecodeError, OSError) as exc:
            raise PageIndexError("bad_page_index", f"page index: {type(exc).__name__}") from exc
    if not isinstance(index, list):
        raise PageIndexError("bad_page_index", "page index is not a list")
    pages, prev = [], 0
    for i, entry in enumerate(index):
        if not isinstance(entry, list) or len(entry) < 2 or not all(isinstance(x, int) for x in entry[:2]):
            raise PageIndexError("bad_page_index", f"entry {i} is not [start, end, …]")
        start, end = entry[0], entry[1]
        if start < prev or end < start or end > len(text):
            raise PageIndexError("bad_page_index", f"entry {i} [{start}, {end}] outside 0..{len(text)}")
        pages.append(text[start:end])
        prev = end
    return pages


def hocr_index(page_texts: list[str]) -> tuple[str, list[list[int]]]:
    """The search text and page index archive-hocr-tools would write for ``page_texts`` (the
    sample world's derivatives; xml offsets are not modelled and given as 0)."""
    index, pos = [], 0
    for t in page_texts:
        index.append([pos, pos + len(t), 0, 0])
        pos += len(t)
    return "".join(page_texts), index


def _parse_xml(data: bytes | str, name: str) -> ET.Element:
    """The root of an IA XML derivative; malformed XML is ``bad_page_index`` naming the file."""
    try:
        return ET.fromstring(data if isinstance(data, bytes) else data.encode("utf-8"))
    except ET.ParseError as exc:
        raise PageIndexError("bad_page_index", f"{name}: {exc}") from exc


def djvu_xml_pages(data: bytes | str) -> list[str]:
    """Page texts of a ``_djvu.xml``: one ``OBJECT`` per page, its ``LINE``s' ``WORD``s joined by
    spaces, lines by ``\\n``, paragraphs ended by a blank line."""
    root = _parse_xml(data, "_djvu.xml")
    pages = []
    for obj in root.iter("OBJECT"):
        paras = []
        for para in obj.iter("PARAGRAPH"):
            lines = [" ".join((w.text or "").strip() for w in line.iter("WORD") if (w.text or "").strip())
                     for line in para.iter("LINE")]
            paras.append("\n".join(x for x in lines if x))
        text = "\n\n".join(p for p in paras if p)
        pages.append(text + "\n" if text else "")
    return pages


def djvu_xml_document(identifier: str, page_texts: list[str]) -> str:
    """A ``_djvu.xml`` for ``page_texts`` (sample world): one OBJECT per page, a PARAGRAPH per
    blank-line block, a LINE per line, a WORD per token (coords not modelled)."""
    from xml.sax.saxutils import escape, quoteattr

    out = ['<?xml version="1.0" encoding="UTF-8"?>', "<DjVuXML>", "<BODY>"]
    for leaf, text in enumerate(page_texts):
        out.append(f'<OBJECT data="file://localhost//{identifier}.djvu" height="3300" type="image/x.djvu" '
                   f'usemap={quoteattr(f"{identifier}_{leaf:04d}.djvu")} width="2550">')
        out.append("<HIDDENTEXT><PAGECOLUMN><REGION>")
        for block in re.split(r"\n\s*\n", text.strip("\n")):
            if not block.strip():
                continue
            out.append("<PARAGRAPH>")
            for line in block.split("\n"):
                words = line.split()
                if words:
                    out.append("<LINE>" + "".join(f'<WORD coords="0,0,0,0">{escape(w)}</WORD>' for w in words)
                               + "</LINE>")
            out.append("</PARAGRAPH>")
        out.append("</REGION></PAGECOLUMN></HIDDENTEXT></OBJECT>")
    out += ["</BODY>", "</DjVuXML>", ""]
    return "\n".join(out)


def page_numbers(data: bytes | str | dict) -> list[dict[str, Any]]:
    """``pages[]`` of a ``_page_numbers.json`` (format-version 2): ``{leafNum, pageNumber,
    confidence, …}`` in file order (one per hOCR page)."""
    doc = data if isinstance(data, dict) else json.loads(data)
    pages = doc.get("pages") if isinstance(doc, dict) else None
    if not isinstance(pages, list) or not all(isinstance(p, dict) and isinstance(p.get("leafNum"), int)
                                              for p in pages):
        raise PageIndexError("bad_page_index", "_page_numbers.json: no pages[].leafNum")
    return pages


def scandata_access_leaves(data: bytes | str) -> list[int]:
    """Leaf numbers of ``_scandata.xml`` ``pageData/page`` whose ``addToAccessFormats`` is not
    ``false`` (the leaves in the access formats, hence in the OCR derivatives), in order."""
    root = _parse_xml(data, "_scandata.xml")
    leaves = []
    for page in root.iter("page"):
        leaf = page.get("leafNum")
        if leaf is None or not leaf.isdigit():
            continue
        access = (page.findtext("addToAccessFormats") or "true").strip().lower()
        if access != "false":
            leaves.append(int(leaf))
    return leaves


def scandata_document(leaves: list[tuple[int, str, bool]]) -> str:
    """A ``_scandata.xml`` (sample world): ``(leafNum, pageType, addToAccessFormats)`` per leaf."""
    out = ["<book>", f"  <bookData><leafCount>{len(leaves)}</leafCount></bookData>", "  <pageData>"]
    for leaf, ptype, access in leaves:
        out.append(f'    <page leafNum="{leaf}"><pageType>{ptype}</pageType>'
                   f"<addToAccessFormats>{'true' if access else 'false'}</addToAccessFormats></page>")
    out += ["  </pageData>", "</book>", ""]
    return "\n".join(out)


@dataclass(frozen=True)
class Alignment:
    """Text page *i* ↔ image leaf ``leaves[i]``; ``source``: scandata | page_numbers | assumed;
    ``reason``: None, ``leaf_page_mismatch`` or ``no_scan_data``."""

    leaves: tuple[int, ...]
    source: str
    reason: str | None = None
    detail: str | None = None


def align_leaves(n_pages: int, access_leaves: list[int] | None, source: str) -> Alignment:
    """Align ``n_pages`` text pages with the scan data's access leaves (``None``: no scan data,
    leaves 0..n-1 assumed, reason ``no_scan_data``). Counts that differ: the first pages keep
    their leaf, the rest are assumed to follow, reason ``leaf_page_mismatch``."""
    if access_leaves is None:
        return Alignment(tuple(range(n_pages)), "assumed", "no_scan_data")
    if len(access_leaves) == n_pages:
        return Alignment(tuple(access_leaves), source)
    leaves = list(access_leaves[:n_pages])
    nxt = (leaves[-1] + 1) if leaves else 0
    while len(leaves) < n_pages:
        leaves.append(nxt)
        nxt += 1
    return Alignment(tuple(leaves), source, "leaf_page_mismatch",
                     f"{n_pages} text pages, {len(access_leaves)} access leaves in {source}")


def jp2_member(zip_name: str, leaf: int) -> str:
    """The member of ``{zipstem}_jp2.zip`` holding leaf ``leaf``: ``{zipstem}_jp2/{zipstem}_{NNNN}.jp2``."""
    stem = zip_name[: -len("_jp2.zip")] if zip_name.endswith("_jp2.zip") else zip_name.rsplit(".", 1)[0]
    return f"{stem}_jp2/{stem}_{leaf:04d}.jp2"


def member_path(identifier: str, zip_name: str, member: str) -> str:
    """The download path of one zip member: ``/download/{id}/{zip}/{member with / as %2F}``."""
    return f"/download/{quote(identifier)}/{quote(zip_name)}/{quote(member, safe='')}"


def b64_len(n: int) -> int:
    return 4 * ((n + 2) // 3)


def fit_image(data: bytes, max_b64_bytes: int, *, min_side: int = 400) -> tuple[bytes, str]:
    """(bytes, mime) of a page image a model takes inline: the image as PNG when its base64 fits
    ``max_b64_bytes`` (pixels unchanged), else JPEG (quality 85), halved in size until it fits.
    :class:`PageIndexError` ``image_too_large`` when even ``min_side`` pixels do not fit."""
    from PIL import Image

    with Image.open(io.BytesIO(data)) as src:
        src.load()
        img = src
        if img.mode not in ("L", "RGB"):
            img = img.convert("RGB" if img.mode in ("RGBA", "P", "CMYK", "I;16") else "L")
        buf = io.BytesIO()
        img.save(buf, format="PNG", optimize=False, compress_level=6)
        if b64_len(buf.tell()) <= max_b64_bytes:
            return buf.getvalue(), "image/png"
        scale = 1.0
        while True:
            w, h = max(1, int(img.width * scale)), max(1, int(img.height * scale))
            small = img.resize((w, h), Image.LANCZOS) if scale < 1.0 else img
            buf = io.BytesIO()
            small.save(buf, format="JPEG", quality=85)
            if b64_len(buf.tell()) <= max_b64_bytes:
                return buf.getvalue(), "image/jpeg"
            if min(w, h) <= min_side:
                raise PageIndexError("image_too_large", f"{w}x{h} JPEG still {buf.tell()} bytes")
            scale /= 2
