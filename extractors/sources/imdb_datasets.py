"""IMDb's non-commercial datasets, read streamed and filtered by id (SPEC A1; issue 16).

The six files the inventory uses (:data:`DATASETS`) are IMDb's TSV dumps: UTF-8, LF, one header
line, tab-separated, **no quoting** (titles contain ``"`` and ``'``; ``characters`` is a bare
JSON array), ``\\N`` for null, lists comma-joined, ids of 7 or 8 digits. The column layouts are
:data:`COLUMNS` (as captured in ``realdata/live/imdb_datasets``); a file whose header differs is
refused (:class:`DatasetLayoutError`), never read by position.

A full dump is gigabytes, so nothing here holds a whole dataset in memory:

* plain ``.tsv`` (how the mirror stores them) — a polars lazy CSV scan, every column ``Utf8``,
  with the id filter (``tconst`` / ``titleId`` / ``nconst``) pushed into the scan and collected
  by the streaming engine;
* ``.tsv.gz`` (as downloaded) — a line-streaming reader over ``gzip.open`` that keeps only the
  wanted rows.

Row order is never relied on (``title.akas`` is in string order of ``ordering``; principals are
sorted numerically here). :func:`read_imdb_facts` joins the six datasets into one plain dict per
wanted title: the values the inventory takes from the datasets rather than from title pages.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import polars as pl

#: the datasets the inventory reads; on the wire ``<imdb_datasets>/<name>.gz``, on disk
#: ``<sources_dir>/imdb/<name>`` (gunzipped)
DATASETS: tuple[str, ...] = ("title.basics.tsv", "title.ratings.tsv", "title.crew.tsv", "title.principals.tsv",
                             "title.akas.tsv", "name.basics.tsv")

#: column layout of every dataset, exactly as IMDb ships it (MANIFEST section 4)
COLUMNS: dict[str, list[str]] = {
    "title.basics.tsv": ["tconst", "titleType", "primaryTitle", "originalTitle", "isAdult", "startYear",
                         "endYear", "runtimeMinutes", "genres"],
    "title.ratings.tsv": ["tconst", "averageRating", "numVotes"],
    "title.crew.tsv": ["tconst", "directors", "writers"],
    "title.principals.tsv": ["tconst", "ordering", "nconst", "category", "job", "characters"],
    "title.akas.tsv": ["titleId", "ordering", "title", "region", "language", "types", "attributes",
                       "isOriginalTitle"],
    "name.basics.tsv": ["nconst", "primaryName", "birthYear", "deathYear", "primaryProfession", "knownForTitles"],
}
#: the id column each dataset is filtered on
ID_COLUMN: dict[str, str] = {name: cols[0] for name, cols in COLUMNS.items()}

BASICS_COLUMNS = COLUMNS["title.basics.tsv"]
RATINGS_COLUMNS = COLUMNS["title.ratings.tsv"]
NULL = "\\N"
#: principals categories that make up the cast
CAST_CATEGORIES = ("actor", "actress")


class DatasetLayoutError(ValueError):
    """A dataset file whose header is not IMDb's layout for that dataset."""


def dataset_name(path: Path | str) -> str | None:
    """``title.basics.tsv`` for ``.../title.basics.tsv`` or ``.../title.basics.tsv.gz`` (else None)."""
    name = Path(path).name
    if name.endswith(".gz"):
        name = name[:-3]
    return name if name in COLUMNS else None


def _header(path: Path) -> list[str]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8", newline="\n") as fh:  # type: ignore[operator]
        return fh.readline().rstrip("\r\n").split("\t")


def _check_header(path: Path, columns: list[str]) -> None:
    got = _header(path)
    if got != columns:
        raise DatasetLayoutError(f"{path.name}: header {got!r} is not the expected layout {columns!r}")


def _ids(ids: Iterable[str] | None) -> list[str] | None:
    return None if ids is None else sorted({str(i) for i in ids})


def _stream_gz(path: Path, columns: list[str], wanted: set[str] | None) -> Iterator[list[str | None]]:
    """Rows of a gzipped dataset, one line at a time (``\\N`` → None), only the wanted ids."""
    n = len(columns)
    with gzip.open(path, "rt", encoding="utf-8", newline="\n") as fh:
        fh.readline()
        for line in fh:
            line = line.rstrip("\r\n")
            if not line:
                continue
            key = line.split("\t", 1)[0]
            if wanted is not None and key not in wanted:
                continue
            parts = line.split("\t")
            parts = (parts + [NULL] * n)[:n]  # a short line gets nulls; extra fields are cut
            yield [None if p == NULL else p for p in parts]


def read_dataset(path: Path | str, columns: list[str], ids: Iterable[str] | None = None,
                 id_column: str | None = None) -> pl.DataFrame:
    """One dataset as a frame of ``Utf8`` columns, only the rows whose ``id_column`` (default: the
    first column) is in ``ids`` (all rows when ``ids`` is None). Streamed: plain TSV through a
    lazy scan with the filter pushed down, ``.gz`` line by line."""
    path = Path(path)
    _check_header(path, columns)
    wanted = _ids(ids)
    idcol = id_column or columns[0]
    schema = {c: pl.Utf8 for c in columns}
    if path.suffix == ".gz":
        wanted_set = None if wanted is None else set(wanted)
        if idcol != columns[0]:
            raise ValueError("gzip datasets are filtered on their first column")
        rows = list(_stream_gz(path, columns, wanted_set))
        return pl.DataFrame(rows, schema=schema, orient="row")
    frame = pl.scan_csv(path, separator="\t", quote_char=None, null_values=[NULL], schema=schema,
                        has_header=True, truncate_ragged_lines=True)
    if wanted is not None:
        frame = frame.filter(pl.col(idcol).is_in(wanted))
    return frame.collect(engine="streaming")


def read_title_basics(path: Path | str, ids: Iterable[str] | None = None) -> pl.DataFrame:
    """``title.basics.tsv[.gz]`` with typed columns (years/runtime Int32, isAdult Boolean, genres
    kept as IMDb's comma-separated string; ``\\N`` → null). Values that do not parse become null.
    ``ids`` restricts the rows (streamed; the full 10M-row file is fine)."""
    df = read_dataset(path, BASICS_COLUMNS, ids)
    return df.with_columns(
        pl.col("isAdult").cast(pl.Int8, strict=False).cast(pl.Boolean),
        pl.col("startYear").cast(pl.Int32, strict=False),
        pl.col("endYear").cast(pl.Int32, strict=False),
        pl.col("runtimeMinutes").cast(pl.Int32, strict=False),
    ).select(BASICS_COLUMNS)


def read_title_ratings(path: Path | str, ids: Iterable[str] | None = None) -> pl.DataFrame:
    """``title.ratings.tsv[.gz]``: tconst, averageRating (Float64), numVotes (Int64)."""
    df = read_dataset(path, RATINGS_COLUMNS, ids)
    return df.with_columns(
        pl.col("averageRating").cast(pl.Float64, strict=False),
        pl.col("numVotes").cast(pl.Int64, strict=False),
    ).select(RATINGS_COLUMNS)


def read_title_crew(path: Path | str, ids: Iterable[str] | None = None) -> pl.DataFrame:
    """``title.crew.tsv``: tconst, directors, writers (comma-joined nconst lists or null)."""
    return read_dataset(path, COLUMNS["title.crew.tsv"], ids)


def read_title_principals(path: Path | str, ids: Iterable[str] | None = None) -> pl.DataFrame:
    """``title.principals.tsv`` with ``ordering`` as Int32, sorted by (tconst, ordering) numerically."""
    df = read_dataset(path, COLUMNS["title.principals.tsv"], ids)
    return df.with_columns(pl.col("ordering").cast(pl.Int32, strict=False)).sort(["tconst", "ordering"])


def read_title_akas(path: Path | str, ids: Iterable[str] | None = None) -> pl.DataFrame:
    """``title.akas.tsv`` (first column ``titleId``) with ``ordering`` Int32 and ``isOriginalTitle``
    Boolean, sorted by (titleId, ordering) numerically (the file is in string order)."""
    df = read_dataset(path, COLUMNS["title.akas.tsv"], ids)
    return df.with_columns(
        pl.col("ordering").cast(pl.Int32, strict=False),
        pl.col("isOriginalTitle").cast(pl.Int8, strict=False).cast(pl.Boolean),
    ).sort(["titleId", "ordering"])


def read_name_basics(path: Path | str, ids: Iterable[str] | None = None) -> pl.DataFrame:
    """``name.basics.tsv``: nconst, primaryName, birth/death year, professions, knownForTitles."""
    return read_dataset(path, COLUMNS["name.basics.tsv"], ids)


def _split(v: str | None) -> list[str]:
    return [x for x in (v or "").split(",") if x and x != NULL]


def _characters(v: str | None) -> list[str]:
    """The bare JSON array of ``characters`` (``["Self"]``); a non-JSON value is one character."""
    if not v:
        return []
    try:
        parsed = json.loads(v)
    except ValueError:
        return [v]
    if isinstance(parsed, list):
        return [str(c) for c in parsed if str(c).strip()]
    return [str(parsed)]


def dataset_paths(imdb_dir: Path | str) -> dict[str, Path | None]:
    """Where each of :data:`DATASETS` lies under ``imdb_dir`` (``<name>`` or ``<name>.gz``), None if absent."""
    root = Path(imdb_dir)
    out: dict[str, Path | None] = {}
    for name in DATASETS:
        plain, gz = root / name, root / f"{name}.gz"
        out[name] = plain if plain.is_file() else gz if gz.is_file() else None
    return out


def read_imdb_facts(imdb_dir: Path | str, ids: Iterable[str]) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """``({tconst: facts}, stats)`` for the wanted titles found in ``title.basics``.

    ``facts`` holds the basics columns (typed as :func:`read_title_basics`), ``averageRating`` and
    ``numVotes`` (title.ratings), and — when those datasets are present — ``directors`` and
    ``writers`` (name lists from title.crew → name.basics, dataset order), ``principals`` (the cast:
    principals of category actor/actress in numeric ``ordering``, each ``{nconst, name,
    category, ordering, characters}``) and ``akas`` (``{title, region, language, types, attributes,
    is_original}`` in numeric ordering). A key is absent when its dataset is absent, so callers can
    tell "no dataset" from "no credits". ``stats`` names the missing datasets and counts names that
    name.basics did not resolve (those people are left out, counted, never invented).
    """
    paths = dataset_paths(imdb_dir)
    wanted = _ids(ids) or []
    stats: dict[str, Any] = {"missing": [n for n, p in paths.items() if p is None], "unresolved_names": 0}
    if paths["title.basics.tsv"] is None or not wanted:
        return {}, stats
    facts = {r["tconst"]: dict(r) for r in read_title_basics(paths["title.basics.tsv"], wanted).to_dicts()}
    found = sorted(facts)
    if not found:
        return {}, stats
    if paths["title.ratings.tsv"] is not None:
        for r in read_title_ratings(paths["title.ratings.tsv"], found).to_dicts():
            facts[r["tconst"]].update(averageRating=r["averageRating"], numVotes=r["numVotes"])
    crew = (read_title_crew(paths["title.crew.tsv"], found).to_dicts()
            if paths["title.crew.tsv"] is not None else None)
    principals = (read_title_principals(paths["title.principals.tsv"], found).to_dicts()
                  if paths["title.principals.tsv"] is not None else None)
    people: set[str] = set()
    for r in crew or []:
        people.update(_split(r["directors"]) + _split(r["writers"]))
    cast_rows = [r for r in principals or [] if (r["category"] or "") in CAST_CATEGORIES]
    people.update(r["nconst"] for r in cast_rows if r["nconst"])
    names: dict[str, str] = {}
    if people and paths["name.basics.tsv"] is not None:
        names = {r["nconst"]: r["primaryName"] for r in read_name_basics(paths["name.basics.tsv"], people).to_dicts()
                 if r["primaryName"]}
    can_name = paths["name.basics.tsv"] is not None

    def named(nconsts: list[str]) -> list[str]:
        out = []
        for n in nconsts:
            if n in names:
                if names[n] not in out:
                    out.append(names[n])
            else:
                stats["unresolved_names"] += 1
        return out

    if crew is not None and can_name:
        for tt in found:
            facts[tt].update(directors=[], writers=[])
        for r in crew:
            facts[r["tconst"]].update(directors=named(_split(r["directors"])), writers=named(_split(r["writers"])))
    if principals is not None and can_name:
        for tt in found:
            facts[tt]["principals"] = []
        for r in cast_rows:
            if r["nconst"] not in names:
                stats["unresolved_names"] += 1
                continue
            facts[r["tconst"]]["principals"].append({
                "nconst": r["nconst"], "name": names[r["nconst"]], "category": r["category"],
                "ordering": r["ordering"], "characters": _characters(r["characters"])})
    if paths["title.akas.tsv"] is not None:
        for tt in found:
            facts[tt]["akas"] = []
        for r in read_title_akas(paths["title.akas.tsv"], found).to_dicts():
            facts[r["titleId"]]["akas"].append({
                "title": r["title"], "region": r["region"], "language": r["language"],
                "types": _split(r["types"]), "attributes": r["attributes"], "is_original": r["isOriginalTitle"]})
    return facts, stats
