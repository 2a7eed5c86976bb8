"""Reading the real subtitle files of ../shared/realdata/srt for validator tests, independently
of extractors/ (so a decoder or parser bug cannot hide a validator bug)."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl

CODECS = {"utf-8 with bom": "utf-8-sig", "utf-8": "utf-8", "utf-16le": "utf-16", "cp1256": "cp1256", "cp1252": "cp1252"}
TIMING = re.compile(r"(\d+):(\d\d):(\d\d)[,.](\d{1,3})\s*-->\s*(\d+):(\d\d):(\d\d)[,.](\d{1,3})")


def manifest_codecs(realdata: Path) -> dict[str, str]:
    """file -> Python codec, from the 'raw encoding' column of srt/MANIFEST.md."""
    out = {}
    for line in (realdata / "srt" / "MANIFEST.md").read_text(encoding="utf-8").splitlines():
        m = re.match(r"\| `([a-z_]+/[^`]+\.srt)` \|", line)
        if m:
            encoding = line.split("|")[6].strip().lower()
            out[m.group(1)] = next(c for k, c in CODECS.items() if encoding.startswith(k))
    return out


def read_track(path: Path, codec: str) -> pl.DataFrame:
    """A minimal SRT reader for these tests (index, timeframe, start_ms, end_ms, content)."""
    text = re.sub(r"\r\n|\r", "\n", path.read_bytes().decode(codec)).strip()
    rows = []
    for block in re.split(r"\n[ \t]*\n", text):
        lines = block.strip().split("\n")
        for i, line in enumerate(lines):
            m = TIMING.search(line)
            if m:
                g = [int(x) for x in m.groups()]
                start = ((g[0] * 60 + g[1]) * 60 + g[2]) * 1000 + g[3]
                end = ((g[4] * 60 + g[5]) * 60 + g[6]) * 1000 + g[7]
                index = int(lines[i - 1]) if i and lines[i - 1].strip().isdigit() else len(rows) + 1
                rows.append((index, line.strip(), start, end, "\n".join(lines[i + 1 :])))
                break
    return pl.DataFrame(
        rows,
        schema={"index": pl.Int64, "timeframe": pl.String, "start_ms": pl.Int64, "end_ms": pl.Int64, "content": pl.String},
        orient="row",
    )
