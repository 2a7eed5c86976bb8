"""Open a published release for reading: DuckDB, Polars (Parquet), film entities.

The release's ``cinesub.duckdb`` holds every table itself (warehouse.release.write_database), so
plain ``duckdb.connect(path, read_only=True)`` opens it from any directory and the release can be
moved or copied. Releases written before that hold views with paths relative to the release
directory; :func:`open_release` sets DuckDB's ``file_search_path`` so those bind too.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import polars as pl


def resolve(releases_dir: Path, version: str) -> Path:
    """``version`` may be a semver, ``latest``, or a path to a release directory."""
    p = Path(version)
    if p.is_dir() and (p / "manifest.json").is_file():
        return p.resolve()
    if version == "latest":
        pointer = releases_dir / "LATEST"
        if not pointer.is_file():
            raise FileNotFoundError(f"no release in {releases_dir}")
        version = pointer.read_text().strip()
    path = releases_dir / version
    if not (path / "manifest.json").is_file():
        raise FileNotFoundError(f"no release {version} in {releases_dir}")
    return path.resolve()


def open_release(release_dir: Path) -> duckdb.DuckDBPyConnection:
    """A read-only DuckDB connection to the release database (older releases' views bound to
    the directory's files)."""
    release_dir = Path(release_dir).resolve()
    con = duckdb.connect(str(release_dir / "cinesub.duckdb"), read_only=True)
    con.execute("SET file_search_path = ?", [str(release_dir)])
    return con


def read_table(release_dir: Path, name: str) -> pl.DataFrame:
    return pl.read_parquet(Path(release_dir) / f"{name}.parquet")


def iter_entities(release_dir: Path) -> Iterator[dict[str, Any]]:
    """The film entities one at a time (the file can be large)."""
    with open(Path(release_dir) / "films.jsonl", encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)


def manifest(release_dir: Path) -> dict[str, Any]:
    return json.loads((Path(release_dir) / "manifest.json").read_text())
