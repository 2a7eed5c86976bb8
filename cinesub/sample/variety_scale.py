"""A generated year of *Variety* at paper scale for the scale benchmark (issue 17 point 8,
``benchmarks/bench_hollywood_scale.py``): ``issues`` weekly issues of ``leaves`` leaves each, a
share ``keep_rate`` of them grosses pages, as Internet Archive item directories that
``fixtures/ia_server.py`` serves in the real URL shapes.

One item per weekly issue, identifier ``variety{VOL}-{YYYY}-{MM}-{DD}`` (the real items are
monthly ``variety{VOL}-{YYYY}-{MM}`` of 4–5 issues, ~335 leaves; a weekly item keeps one
issue = one item and makes the item count a free parameter). Each item has the page-level
derivatives of :func:`cinesub.sample.scans.page_derivatives` (hOCR search text + page index,
``_djvu.txt``, ``_page_numbers.json``, ``_scandata.xml``) and a ``_jp2.zip`` with one lossless
JPEG 2000 member per leaf.

Kept small on purpose, so a 52-issue year builds and runs in a few minutes on 2 cores: page
images are **low-resolution** (``image_px`` = 96×128 grayscale: white paper, black "text line"
bars, the leaf number in the top row so no two leaves share bytes) — about 1–3 kB a member
instead of the 2–20 MB of a real 4000×5500 scan; page texts are short (a grosses page is one of
the sample world's 1934 grosses pages, a news page four sentences of prose). Leaf 0 is the MHDL
colophon; the grosses leaves are spread evenly over the issue; the rest are news, legitimate and
vaudeville pages (none kept by the page filter). Everything is a pure function of the arguments.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from cinesub.sample.scans import jp2_bytes, page_derivatives, scoped_rng, write_item, write_zip

SCALE_SEED = 1934
#: the generated page image size (width, height): a thumbnail, not a scan (see the module docstring)
IMAGE_PX = (96, 128)


def issue_dates(issues: int, year: int = 1934) -> list[str]:
    """``issues`` weekly Wednesdays from the year's first one (1934-01-03)."""
    d = dt.date(year, 1, 1)
    d += dt.timedelta(days=(2 - d.weekday()) % 7)
    return [(d + dt.timedelta(days=7 * i)).isoformat() for i in range(issues)]


def kept_leaves(leaves: int, keep_rate: float) -> list[int]:
    """The grosses leaves of one issue: ``round(keep_rate × leaves)`` (≥ 1), spread evenly, never leaf 0."""
    n = max(1, round(keep_rate * leaves))
    step = (leaves - 1) / n
    return sorted({1 + int(i * step + step / 2) for i in range(n)})


def leaf_image(leaf: int, rng: Any, size: tuple[int, int] = IMAGE_PX) -> Any:
    """A low-resolution page: text-line bars of seeded lengths, the leaf number as pixels on row 0."""
    from PIL import Image, ImageDraw

    w, h = size
    img = Image.new("L", (w, h), 255)
    draw = ImageDraw.Draw(img)
    for y in range(8, h - 6, 5):
        draw.rectangle((6, y, 6 + rng.randrange(w // 3, w - 12), y + 1), fill=0)
    for bit in range(16):  # the leaf number, one pixel per bit
        if leaf >> bit & 1:
            img.putpixel((bit, 0), 0)
    return img


def _texts(seed: int, issue_no: int, iso: str, leaves: int, keep: set[int], ident: str) -> tuple[list[str], list[str]]:
    from cinesub.sample.variety import COLOPHON, PROSE, _date_line, _pages_for_issue

    base = _pages_for_issue(seed, 1934, issue_no % 2, iso, 0)
    grosses = ["\n".join(p.lines) for p in base if p.kind in ("grosses", "broadway")]
    others = ["\n".join(p.lines) for p in base if p.kind in ("legitimate", "vaudeville")]
    rng = scoped_rng(seed, "scale-text", iso)
    date_line = _date_line(iso)
    texts, kinds = [], []
    g = 0
    for leaf in range(leaves):
        if leaf == 0:
            texts.append(COLOPHON.format(identifier=ident))
            kinds.append("colophon")
        elif leaf in keep:
            texts.append(grosses[g % len(grosses)])
            kinds.append("grosses")
            g += 1
        elif leaf % 37 == 0:
            texts.append(others[leaf % len(others)])
            kinds.append("other")
        else:
            prose = " ".join(rng.choice(PROSE) for _ in range(4))
            texts.append(f"VARIETY    {date_line}    Page {leaf}\nNews of the Trade\n\n{prose}")
            kinds.append("news")
    return texts, kinds


def generate_scale_world(out_dir: Path | str, *, issues: int = 52, leaves: int = 300, keep_rate: float = 0.04,
                         seed: int = SCALE_SEED, image_px: tuple[int, int] = IMAGE_PX) -> dict[str, Any]:
    """Write the items under ``out_dir/ia`` and return the manifest (also ``out_dir/manifest.json``):
    items, leaves, grosses leaves per item, bytes written by kind."""
    out = Path(out_dir)
    ia = out / "ia"
    ia.mkdir(parents=True, exist_ok=True)
    manifest: dict[str, Any] = {"generator": "cinesub.sample.variety_scale", "seed": seed, "issues": issues,
                                "leaves_per_issue": leaves, "keep_rate": keep_rate, "image_px": list(image_px),
                                "items": [], "bytes": {"jp2_zip": 0, "text_derivatives": 0}}
    keep = set(kept_leaves(leaves, keep_rate))
    for n, iso in enumerate(issue_dates(issues)):
        y = iso[:4]
        ident = f"variety{113 + n // 13}-{iso}"
        texts, kinds = _texts(seed, n, iso, leaves, keep, ident)
        rng = scoped_rng(seed, "scale-image", ident)
        zip_name = f"{ident}_jp2.zip"
        zpath = out / f".{zip_name}.tmp"
        write_zip(zpath, [(f"{ident}_jp2/{ident}_{leaf:04d}.jp2", jp2_bytes(leaf_image(leaf, rng, image_px)))
                          for leaf in range(leaves)])
        files = page_derivatives(ident, texts)
        manifest["bytes"]["text_derivatives"] += sum(len(v) for v in files.values())
        files[zip_name] = zpath.read_bytes()
        manifest["bytes"]["jp2_zip"] += len(files[zip_name])
        zpath.unlink()
        meta = {"identifier": ident, "mediatype": "texts", "collection": ["mediahistory", "theatreandvaudeville"],
                "title": f"Variety ({iso})", "creator": "Variety", "journal-title": "Variety",
                "format": "Periodicals", "volume": str(113 + n // 13), "year": y, "date": iso,
                "date-start": iso, "date-end": iso, "page-count": str(leaves),
                "sponsor": "Media History Digital Library", "language": "English"}
        write_item(ia, ident, meta, files)
        manifest["items"].append({"identifier": ident, "issue_date": iso, "leaves": leaves,
                                  "grosses_leaves": sum(k == "grosses" for k in kinds)})
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return manifest
