"""Export a release into a consumable layout: JSON, Parquet, or a Hugging Face dataset directory.

What: ``export_release(release_dir, out, fmt, public_only=...)`` writes

- ``json``: ``films.jsonl`` (copied, or filtered) and ``films.json`` — the same entities as one
  JSON array, streamed line by line (``[``, entity lines joined by ``,\\n``, ``]``) so no more than
  one film entity is held in memory;
- ``parquet``: every Parquet table plus ``manifest.json`` (the release manifest with its ``files``
  restated for the exported bytes and an ``export`` block);
- ``hf``: every Parquet table, a dataset card ``README.md`` whose ``configs`` make
  ``datasets.load_dataset(dir, name=<table>)`` work offline, and ``croissant.json``;

and, for every format, ``export_manifest.json`` (format, source version, rows dropped, and the
sha256/size/rows of every exported file).

``public_only`` keeps only the stratified public sample (SPEC C): films whose ``split`` is not
``public`` are removed from every table with an ``imdb_id`` column and from ``films.jsonl``
(corpus-level aggregates without ``imdb_id`` — funnel, coverage — are kept as they are).

Why this shape: an export is written into a temporary sibling directory and renamed into place,
so a reader never sees a half-written export (its temporary is named after the exporting process,
so the next export removes one a killed export left, cinesub/tmpfiles.py), and is published
readable by others (directories 0755, files 0644); it refuses to replace a non-empty ``out``; and every
file copied unchanged is checked against the sha256 in the release manifest, so a corrupted
release is not silently re-published.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections import Counter
from pathlib import Path
from typing import Any, Literal

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from cinesub import tmpfiles
from warehouse.croissant import RAI_PROPERTIES, build_croissant, dumps_croissant
from warehouse.hf_card import render_card
from warehouse.publish import file_sha256

Format = Literal["json", "parquet", "hf"]
FORMATS: tuple[str, ...] = ("json", "parquet", "hf")
EXPORT_MANIFEST = "export_manifest.json"
_BATCH_ROWS = 65_536
_IMDB_IN_LINK = re.compile(r"(tt\d+)")


class ExportError(ValueError):
    """An export that cannot be made; ``reason`` is a stable reason code."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(f"{reason}: {message}")
        self.reason = reason


def _check_out(out: Path) -> None:
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise ExportError("out_not_a_directory", f"{out} exists and is not a directory")
    if out.is_dir() and any(out.iterdir()):
        raise FileExistsError(f"out_not_empty: {out} exists and is not empty; refusing to overwrite")


def _public_filter(release_dir: Path) -> tuple[set[str], set[int]]:
    """(imdb ids, film ids) of the public sample; raises when films has no split column."""
    films_path = release_dir / "films.parquet"
    schema = pq.read_schema(films_path)
    if "split" not in schema.names:
        raise ExportError("no_split_column", "public_only needs a `split` column in films.parquet")
    cols = [c for c in ("id", "imdb_id", "split") if c in schema.names]
    films = pq.read_table(films_path, columns=cols).to_pylist()
    unknown = sorted({f["split"] for f in films} - {"public", "heldback"}, key=str)
    if unknown:
        raise ExportError("unknown_split_value", f"films.split holds {unknown}; expected public|heldback")
    public = [f for f in films if f["split"] == "public"]
    return {f["imdb_id"] for f in public}, {f["id"] for f in public if "id" in f}


def _copy_verified(src: Path, dst: Path, entry: dict[str, Any] | None) -> None:
    shutil.copyfile(src, dst)
    expected = (entry or {}).get("sha256")
    if expected and file_sha256(dst) != expected:
        raise ExportError("checksum_mismatch", f"{src.name}: sha256 differs from the release manifest")


def _filter_parquet(src: Path, dst: Path, keep_imdb: set[str]) -> tuple[int, int]:
    """Stream ``src`` batch by batch into ``dst`` keeping rows whose imdb_id is public."""
    pf = pq.ParquetFile(src)
    keep = pa.array(sorted(keep_imdb), type=pa.string())
    kept = dropped = 0
    with pq.ParquetWriter(dst, pf.schema_arrow, compression="zstd") as writer:
        for batch in pf.iter_batches(batch_size=_BATCH_ROWS):
            ids = batch.column(batch.schema.get_field_index("imdb_id")).cast(pa.string())
            mask = pc.fill_null(pc.is_in(ids, value_set=keep), False)
            part = batch.filter(mask)
            kept += part.num_rows
            dropped += batch.num_rows - part.num_rows
            writer.write_table(pa.Table.from_batches([part], schema=pf.schema_arrow))
    return kept, dropped


def _entity_is_public(line: str, keep_imdb: set[str], keep_ids: set[int]) -> bool:
    entity = json.loads(line)
    link = ((entity.get("sources") or {}).get("imdbLink")) or ""
    m = _IMDB_IN_LINK.search(link)
    if m:
        return m.group(1) in keep_imdb
    return entity.get("id") in keep_ids


def _write_jsonl(src: Path, dst: Path, entry: dict[str, Any] | None,
                 keep: tuple[set[str], set[int]] | None) -> tuple[int, int]:
    if keep is None:
        _copy_verified(src, dst, entry)
        with open(dst, "rb") as fh:
            return sum(1 for _ in fh), 0
    kept = dropped = 0
    with open(src, encoding="utf-8") as fin, open(dst, "w", encoding="utf-8") as fout:
        for line in fin:
            if not line.strip():
                continue
            if _entity_is_public(line, *keep):
                fout.write(line if line.endswith("\n") else line + "\n")
                kept += 1
            else:
                dropped += 1
    return kept, dropped


def _write_json_array(jsonl: Path, dst: Path) -> int:
    """``films.json``: the JSONL lines as one array, one entity in memory at a time."""
    n = 0
    with open(jsonl, encoding="utf-8") as fin, open(dst, "w", encoding="utf-8") as fout:
        fout.write("[")
        for line in fin:
            line = line.rstrip("\n")
            if not line.strip():
                continue
            fout.write(",\n" if n else "\n")
            fout.write(line)
            n += 1
        fout.write("\n]\n")
    return n


def _file_entry(path: Path, rows: int | None) -> dict[str, Any]:
    return {"rows": rows, "sha256": file_sha256(path), "size": path.stat().st_size}


def _croissant_texts(release_dir: Path, manifest: dict[str, Any], license: str | None,
                     url: str | None, description: str | None,
                     date_published: str | None) -> dict[str, Any]:
    """Licence, url, description, date and RAI texts: arguments, else the release's own
    croissant.json, else the release settings' defaults."""
    from cinesub.settings import ReleaseSettings

    existing: dict[str, Any] = {}
    cj = release_dir / "croissant.json"
    if cj.is_file():
        existing = json.loads(cj.read_text(encoding="utf-8"))
    defaults = ReleaseSettings()
    rai = {k: v for k, v in existing.items()
           if k.startswith("rai:") and k.removeprefix("rai:") in RAI_PROPERTIES}
    return {
        "license": license or existing.get("license") or defaults.license,
        "url": url or existing.get("url") or defaults.dataset_url,
        "description": description or existing.get("description") or (
            f"{manifest.get('name', 'cinesub')} {manifest.get('version', '')}: multilingual "
            "subtitle benchmark corpus (films, ratings, subtitle tracks and entries, "
            "language-safety gold, task references, audit tables)."),
        "date_published": date_published or existing.get("datePublished"),
        "rai": rai,
    }


def export_release(
    release_dir: Path,
    out: Path,
    fmt: Format,
    *,
    public_only: bool = False,
    license: str | None = None,
    url: str | None = None,
    description: str | None = None,
    date_published: str | None = None,
) -> Path:
    """Export the release at ``release_dir`` into the new directory ``out`` (see module doc);
    returns ``out``. Licence, url, description and publication date for the ``hf`` metadata come
    from the arguments, else from the release's ``croissant.json``, else from the release settings'
    defaults (no date then: pass ``date_published``). Raises ``FileExistsError`` for a non-empty
    ``out`` and ``ExportError`` (with a reason code) for an unknown format, a missing manifest or
    split, or a checksum mismatch."""
    release_dir = Path(release_dir)
    out = Path(out)
    if fmt not in FORMATS:
        raise ExportError("unknown_format", f"{fmt!r}; expected one of {', '.join(FORMATS)}")
    manifest_path = release_dir / "manifest.json"
    if not manifest_path.is_file():
        raise ExportError("no_manifest", f"{release_dir} has no manifest.json")
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    rfiles: dict[str, dict[str, Any]] = manifest.get("files") or {}
    _check_out(out)

    keep = _public_filter(release_dir) if public_only else None
    # the data tables (top level); statistics under stats/ are derived and not exported
    tables = sorted(f.removesuffix(".parquet") for f in rfiles if f.endswith(".parquet") and "/" not in f)
    if fmt != "json" and "films" not in tables:
        raise ExportError("no_films_table", "films.parquet is not in the release manifest")

    out.parent.mkdir(parents=True, exist_ok=True)
    tmpfiles.sweep(out.parent, prefix=".tmp-export-")  # left by a killed export
    tmp = tmpfiles.mkdtemp("export", out.parent)
    try:
        files: dict[str, dict[str, Any]] = {}
        dropped: dict[str, int] = {}
        if fmt == "json":
            src = release_dir / "films.jsonl"
            if not src.is_file():
                raise ExportError("no_entities", f"{release_dir} has no films.jsonl")
            n, d = _write_jsonl(src, tmp / "films.jsonl", rfiles.get("films.jsonl"), keep)
            dropped["films.jsonl"] = d
            files["films.jsonl"] = _file_entry(tmp / "films.jsonl", n)
            n_arr = _write_json_array(tmp / "films.jsonl", tmp / "films.json")
            files["films.json"] = _file_entry(tmp / "films.json", n_arr)
        else:
            schemas: dict[str, pa.Schema] = {}
            for t in tables:
                name = f"{t}.parquet"
                src, dst = release_dir / name, tmp / name
                schema = pq.read_schema(src)
                if keep is not None and "imdb_id" in schema.names:
                    n, d = _filter_parquet(src, dst, keep[0])
                    dropped[name] = d
                else:
                    _copy_verified(src, dst, rfiles.get(name))
                    n = pq.ParquetFile(dst).metadata.num_rows
                files[name] = _file_entry(dst, n)
                schemas[t] = schema
            if fmt == "parquet":
                restated = dict(manifest)
                restated["files"] = {k: files[k] for k in sorted(files)}
                restated["export"] = {"format": fmt, "public_only": public_only,
                                      "source_manifest_sha256": file_sha256(manifest_path)}
                (tmp / "manifest.json").write_text(
                    json.dumps(restated, indent=2, sort_keys=True) + "\n", encoding="utf-8")
                files["manifest.json"] = _file_entry(tmp / "manifest.json", None)
            else:  # hf
                texts = _croissant_texts(release_dir, manifest, license, url, description,
                                         date_published)
                sub = {**{k: v for k, v in manifest.items() if k != "files"},
                       "files": {k: files[k] for k in sorted(files)}}
                version = manifest.get("version") or "0.0.0"
                doc = build_croissant(
                    tmp, sub, table_schemas=schemas, description=texts["description"],
                    license=texts["license"], url=texts["url"], version=version,
                    date_published=texts["date_published"], rai=texts["rai"])
                (tmp / "croissant.json").write_text(dumps_croissant(doc), encoding="utf-8")
                split_counts = None
                if "split" in schemas["films"].names:
                    col = pq.read_table(tmp / "films.parquet", columns=["split"]).column("split")
                    split_counts = dict(Counter(str(v) for v in col.to_pylist()))
                card = render_card(
                    sub, tables=["films"] + [t for t in tables if t != "films"], stats=None,
                    license=texts["license"], version=version,
                    pretty_name=f"{manifest.get('name', 'cinesub')} {version}"
                                + (" (public sample)" if public_only else ""),
                    table_schemas=schemas, split_counts=split_counts, url=texts["url"],
                    rai=texts["rai"])
                (tmp / "README.md").write_text(card, encoding="utf-8")
                files["croissant.json"] = _file_entry(tmp / "croissant.json", None)
                files["README.md"] = _file_entry(tmp / "README.md", None)

        export_manifest = {
            "name": manifest.get("name"),
            "version": manifest.get("version"),
            "format": fmt,
            "public_only": public_only,
            "source": {"release_dir": release_dir.name, "manifest_sha256": file_sha256(manifest_path)},
            "dropped_rows": dict(sorted(dropped.items())),
            "files": {k: files[k] for k in sorted(files)},
        }
        (tmp / EXPORT_MANIFEST).write_text(
            json.dumps(export_manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        _check_out(out)  # still absent or empty: a concurrent writer did not get there first
        tmpfiles.make_public(tmp)  # readable by others (mkdtemp made it 0700)
        os.replace(tmp, out)
        return out
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
