"""Scanned pages and Internet Archive items for the synthetic public-domain worlds
(:mod:`cinesub.sample.variety`, :mod:`cinesub.sample.cce`): seeded randomness, page images
rendered with Pillow (PNG, lossless JPEG 2000), their digests, and IA item directories
(``_item.json``, files, a stored zip, a film's ``_meta.xml``). Byte-deterministic.
"""

from __future__ import annotations

import hashlib
import io
import json
import random
import textwrap
import zipfile
from pathlib import Path
from typing import Any


def scoped_rng(seed: int, *scope: object) -> random.Random:
    """The random stream of one scope of a public-domain world (a pure function of seed and scope)."""
    h = hashlib.sha256("|".join([str(seed), *map(str, scope)]).encode()).digest()
    return random.Random(int.from_bytes(h[:8], "big"))


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def pixel_sha256(img: Any) -> str:
    """sha256 over an image's mode, size and raw pixels: the same for a PNG and a lossless JP2 of
    one page (the Gemini fixture recognises pages by it as well as by the file bytes)."""
    h = hashlib.sha256(f"{img.mode}|{img.size[0]}x{img.size[1]}|".encode())
    h.update(img.tobytes())
    return h.hexdigest()


def image_pixel_sha256(data: bytes) -> str | None:
    """:func:`pixel_sha256` of an encoded image (PNG, JPEG 2000, ...); None when Pillow cannot read it."""
    try:
        from PIL import Image

        with Image.open(io.BytesIO(data)) as img:
            img.load()
            return pixel_sha256(img)
    except Exception:  # noqa: BLE001 - not an image Pillow reads
        return None


def font(size: int, bold: bool = False) -> Any:
    import matplotlib
    from PIL import ImageFont

    name = "DejaVuSans-Bold.ttf" if bold else "DejaVuSans.ttf"
    return ImageFont.truetype(str(Path(matplotlib.get_data_path()) / "fonts" / "ttf" / name), size)


def render_page(lines: list[str], *, width: int = 1000, size: int = 13, head_lines: int = 1) -> Any:
    """Render text lines onto a white grayscale page (Pillow + DejaVu Sans from matplotlib).
    Lines are wrapped at 118 characters; the first ``head_lines`` lines are bold."""
    from PIL import Image, ImageDraw

    wrapped: list[tuple[str, bool]] = []
    for i, line in enumerate(lines):
        parts = textwrap.wrap(line, 118) or [""]
        wrapped.extend((p, i < head_lines) for p in parts)
    lh = size + 5
    height = 40 + lh * len(wrapped)
    img = Image.new("L", (width, height), 255)
    draw = ImageDraw.Draw(img)
    regular, bold = font(size), font(size, bold=True)
    y = 20
    for text, is_bold in wrapped:
        draw.text((24, y), text, fill=0, font=bold if is_bold else regular)
        y += lh
    return img


def png_bytes(img: Any) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format="PNG", optimize=False, compress_level=6)
    return buf.getvalue()


def jp2_bytes(img: Any) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format="JPEG2000", irreversible=False)  # reversible 5/3 wavelet: lossless
    return buf.getvalue()


def write_zip(path: Path, members: list[tuple[str, bytes]]) -> None:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as zf:
        for name, data in members:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            zf.writestr(info, data)


def page_derivatives(stem: str, page_texts: list[str], *, hocr: bool = True) -> dict[str, bytes]:
    """IA's page-level OCR derivatives of an item's leaf texts (leaf 0 first): the hOCR search
    text + page index (gzipped, character offsets; ``hocr``) or ``_djvu.xml`` (not ``hocr``), the
    ``_djvu.txt`` with no page marker (blocks separated by a blank line, as real files are),
    ``_page_numbers.json`` and ``_scandata.xml`` (every leaf in the access formats)."""
    import gzip

    from extractors.ia_pages import djvu_xml_document, hocr_index, scandata_document

    texts = [t.rstrip("\n") + "\n" for t in page_texts]
    out: dict[str, bytes] = {}
    if hocr:
        search, index = hocr_index(texts)
        out[f"{stem}_hocr_searchtext.txt.gz"] = gzip.compress(search.encode("utf-8"), mtime=0)
        out[f"{stem}_hocr_pageindex.json.gz"] = gzip.compress(json.dumps(index).encode("ascii"), mtime=0)
    else:
        out[f"{stem}_djvu.xml"] = djvu_xml_document(stem, texts).encode("utf-8")
    out[f"{stem}_djvu.txt"] = "\n".join(t.replace("\n", " \n") for t in texts).encode("utf-8")
    numbers = {"identifier": stem, "format-version": "2", "archive-hocr-tools-version": "1.1.50", "confidence": 90,
               "pages": [{"leafNum": i, "confidence": 90, "pageNumber": str(i) if i else "", "pageProb": 0.9,
                          "wordConf": 90} for i in range(len(texts))]}
    out[f"{stem}_page_numbers.json"] = (json.dumps(numbers, indent=1) + "\n").encode("utf-8")
    out[f"{stem}_scandata.xml"] = scandata_document(
        [(i, "Cover" if i == 0 else "Normal", True) for i in range(len(texts))]).encode("utf-8")
    return out


def write_item(ia_dir: Path, identifier: str, metadata: dict[str, Any], files: dict[str, bytes]) -> None:
    """One IA item directory: ``_item.json`` (the metadata dict) plus its files."""
    d = ia_dir / identifier
    d.mkdir(parents=True, exist_ok=True)
    (d / "_item.json").write_text(json.dumps(metadata, indent=1, sort_keys=True, ensure_ascii=False) + "\n",
                                  encoding="utf-8")
    for name, data in files.items():
        (d / name).write_bytes(data)


def film_meta_xml(identifier: str, meta: dict[str, Any]) -> bytes:
    from xml.sax.saxutils import escape

    rows = "".join(f"  <{k}>{escape(str(v))}</{k}>\n" for k, v in sorted(meta.items()) if not isinstance(v, list))
    return f"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<metadata>\n{rows}</metadata>\n".encode()
