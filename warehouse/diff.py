"""What changed between two releases, and which semver bump that calls for (SPEC C).

``diff_releases(old_dir, new_dir)`` compares two release directories through their Parquet
tables (DuckDB, nothing loaded into Python beyond the differing keys):

* ``films``  – key ``imdb_id``: added, removed, changed (which columns differ; ``id`` is left out
  of ``columns`` and reported separately as ``id_changed`` because ids are meant to be stable);
* ``tracks`` – key ``(imdb_id, language)``: added, removed, changed (which of ``track_id``,
  ``raw_sha256``, ``n_entries``, … differ);
* ``entries`` – per ``(imdb_id, language)``: how many entries were added, removed or changed,
  from ``EXCEPT`` on ``(index, timeframe, content)`` (an index present on both sides whose
  timeframe or content differs is *changed*);
* ``task_references`` – key ``imdb_id``: films whose task references (plot, synopsis, …) were
  added, removed or changed (which columns differ);
* ``ratings`` / ``language_safety`` – keys ``(imdb_id, country)`` / ``(imdb_id, category)``: per
  film present in both releases, which countries / categories were added, removed or changed,
  and row totals over all films;
* ``tables`` – row counts old/new and ``same_bytes`` (manifest sha256 equal; ``None`` when a side
  lacks the table or its checksum) for every Parquet file named in either manifest.

Every core section also lists ``columns_added`` / ``columns_removed`` (schema changes).

``change_kind`` follows Croissant's rule: *patch* = the data is the same (repackaged), *minor* =
data was only added (rows or columns), *major* = anything changed or removed. Only the data tables
(films, tracks, entries, ratings, language_safety, task_references) decide it; the bookkeeping tables (funnel,
coverage, flags, sanitization_log) describe how the data was made and are reported in ``tables``
only. A data table missing from the old release makes the change *major* (nothing can be shown to
be additive), as the previous rule in ``warehouse.release`` did — so the first release that
carries ``task_references`` after one without it is *major*: its values were only in
``films.jsonl`` before and cannot be shown unchanged from the tables.

``change_kind_from_tables(old_dir, new_tables)`` applies the same rule to a release that is not
yet written (the publisher holds the new tables in memory). ``render_diff_text`` is the CLI view.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

#: Keyed data tables and their keys; entries are diffed separately (per track, by content).
KEYED = {
    "films": ("imdb_id",),
    "tracks": ("imdb_id", "language"),
    "ratings": ("imdb_id", "country"),
    "language_safety": ("imdb_id", "category"),
    "task_references": ("imdb_id",),
}
#: Tables whose content decides the change kind.
DATA_TABLES = ("films", "tracks", "entries", "ratings", "language_safety", "task_references")
ENTRY_KEY = ("imdb_id", "language")
ENTRY_CONTENT = ("index", "timeframe", "content")
#: Columns never reported as film changes (sequential id is reported as ``id_changed``).
FILM_IGNORED = ("id",)
KINDS = ("patch", "minor", "major")


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _columns(con: duckdb.DuckDBPyConnection, view: str) -> dict[str, str]:
    return {r[0]: r[1] for r in con.execute(f"DESCRIBE {_q(view)}").fetchall()}


def _bind(con: duckdb.DuckDBPyConnection, side: str, name: str, source: Path | pa.Table | None) -> bool:
    """Expose ``source`` as view ``<side>_<name>``; False when there is none."""
    view = f"{side}_{name}"
    if source is None:
        return False
    if isinstance(source, Path):
        if not source.exists():
            return False
        con.read_parquet(str(source)).create_view(view)
    else:
        con.register(view, source)
    return True


def _empty_like(con: duckdb.DuckDBPyConnection, view: str, like: str) -> None:
    con.execute(f"CREATE VIEW {_q(view)} AS SELECT * FROM {_q(like)} WHERE false")


def _eq(col: str, a: str, b: str, types: tuple[str, str]) -> str:
    """SQL for 'column differs' between aliases a and b, NULL-safe; mixed types compare as text."""
    if types[0] == types[1]:
        return f"{a}.{_q(col)} IS DISTINCT FROM {b}.{_q(col)}"
    return f"CAST({a}.{_q(col)} AS VARCHAR) IS DISTINCT FROM CAST({b}.{_q(col)} AS VARCHAR)"


def _keyed_diff(con: duckdb.DuckDBPyConnection, name: str, key: tuple[str, ...]) -> dict[str, Any]:
    old_cols, new_cols = _columns(con, f"old_{name}"), _columns(con, f"new_{name}")
    missing = [k for k in key if k not in old_cols or k not in new_cols]
    if missing:
        raise ValueError(f"diff_missing_key: {name} lacks key column(s) {missing}")
    on = " AND ".join(f"o.{_q(k)} = n.{_q(k)}" for k in key)
    sel = ", ".join(f"{{a}}.{_q(k)}" for k in key)
    order = ", ".join(_q(k) for k in key)

    def keys_only(src: str, other: str, a: str, b: str) -> list[tuple]:
        rows = con.execute(
            f"SELECT DISTINCT {sel.format(a=a)} FROM {_q(src)} {a} WHERE NOT EXISTS "
            f"(SELECT 1 FROM {_q(other)} {b} WHERE {on}) ORDER BY {order}"
        ).fetchall()
        return [tuple(r) for r in rows]

    added = keys_only(f"new_{name}", f"old_{name}", "n", "o")
    removed = keys_only(f"old_{name}", f"new_{name}", "o", "n")
    common = [c for c in old_cols if c in new_cols and c not in key]
    changed: dict[tuple, set[str]] = {}
    if common:
        flags = ", ".join(f"({_eq(c, 'o', 'n', (old_cols[c], new_cols[c]))}) AS {_q('d_' + c)}" for c in common)
        any_diff = " OR ".join(_q("d_" + c) for c in common)
        rows = con.execute(
            f"SELECT * FROM (SELECT {sel.format(a='o')}, {flags} FROM {_q('old_' + name)} o "
            f"JOIN {_q('new_' + name)} n ON {on}) WHERE {any_diff}"
        ).fetchall()
        for r in rows:
            k = tuple(r[: len(key)])
            changed.setdefault(k, set()).update(c for c, d in zip(common, r[len(key):]) if d)
    return {
        "added": added,
        "removed": removed,
        "changed": {k: sorted(v) for k, v in sorted(changed.items(), key=lambda kv: tuple(map(str, kv[0])))},
        "columns_added": sorted(c for c in new_cols if c not in old_cols),
        "columns_removed": sorted(c for c in old_cols if c not in new_cols),
    }


def _entries_diff(con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
    old_cols, new_cols = _columns(con, "old_entries"), _columns(con, "new_entries")
    need = ENTRY_KEY + ENTRY_CONTENT
    missing = [c for c in need if c not in old_cols or c not in new_cols]
    if missing:
        raise ValueError(f"diff_missing_key: entries lack column(s) {missing}")
    cols = ", ".join(_q(c) for c in need)
    k = ", ".join(_q(c) for c in ENTRY_KEY + ("index",))
    match = " AND ".join(f"ch.{_q(c)} = x.{_q(c)}" for c in ENTRY_KEY + ("index",))
    rows = con.execute(
        f"""
        WITH rem AS (SELECT {cols} FROM old_entries EXCEPT SELECT {cols} FROM new_entries),
             add AS (SELECT {cols} FROM new_entries EXCEPT SELECT {cols} FROM old_entries),
             ch AS (SELECT {k} FROM rem INTERSECT SELECT {k} FROM add),
             r AS (SELECT imdb_id, language, count(*) AS n FROM rem x WHERE NOT EXISTS
                   (SELECT 1 FROM ch WHERE {match}) GROUP BY ALL),
             a AS (SELECT imdb_id, language, count(*) AS n FROM add x WHERE NOT EXISTS
                   (SELECT 1 FROM ch WHERE {match}) GROUP BY ALL),
             c AS (SELECT imdb_id, language, count(*) AS n FROM ch GROUP BY ALL),
             keys AS (SELECT imdb_id, language FROM r UNION SELECT imdb_id, language FROM a
                      UNION SELECT imdb_id, language FROM c)
        SELECT keys.imdb_id, keys.language, coalesce(a.n, 0), coalesce(r.n, 0), coalesce(c.n, 0)
        FROM keys LEFT JOIN a USING (imdb_id, language) LEFT JOIN r USING (imdb_id, language)
                  LEFT JOIN c USING (imdb_id, language)
        ORDER BY keys.imdb_id, keys.language
        """
    ).fetchall()
    tracks = [{"imdb_id": i, "language": lang, "added": int(a), "removed": int(r), "changed": int(c)}
              for i, lang, a, r, c in rows]
    return {
        "added": sum(t["added"] for t in tracks),
        "removed": sum(t["removed"] for t in tracks),
        "changed": sum(t["changed"] for t in tracks),
        "tracks": tracks,
        "columns_added": sorted(c for c in new_cols if c not in old_cols),
        "columns_removed": sorted(c for c in old_cols if c not in new_cols),
    }


def _per_film(raw: dict[str, Any], label: str, skip: set[str]) -> dict[str, Any]:
    """Fold a (imdb_id, <label>) keyed diff into one record per film present on both sides."""
    films: dict[str, dict[str, list[str]]] = {}
    for part in ("added", "removed"):
        for imdb_id, item in raw[part]:
            if imdb_id not in skip:
                films.setdefault(imdb_id, {"added": [], "removed": [], "changed": []})[part].append(item)
    for (imdb_id, item), _cols in raw["changed"].items():
        if imdb_id not in skip:
            films.setdefault(imdb_id, {"added": [], "removed": [], "changed": []})["changed"].append(item)
    return {
        "films": [{"imdb_id": i, **{p: sorted(v[p]) for p in ("added", "removed", "changed")}}
                  for i, v in sorted(films.items())],
        "rows_added": len(raw["added"]),
        "rows_removed": len(raw["removed"]),
        "rows_changed": len(raw["changed"]),
        "columns_added": raw["columns_added"],
        "columns_removed": raw["columns_removed"],
        "key": label,
    }


def _data_diff(old: Mapping[str, Path | pa.Table | None], new: Mapping[str, Path | pa.Table | None],
               *, kind_only: bool = False) -> dict[str, Any]:
    """Diff of the data tables given as Parquet paths or Arrow tables (None = absent).
    ``kind_only``: only ``change_kind`` is wanted, so the entries (the one table as large as the
    corpus) are compared only when the other tables leave the kind below major — entries can
    raise the kind, never lower it; ``entries`` is then None when they were not compared."""
    if kind_only:
        first = _data_diff_tables(old, new, skip_entries=True)
        if first["change_kind"] == "major":
            return {**first, "entries": None}
    return _data_diff_tables(old, new, skip_entries=False)


def _data_diff_tables(old: Mapping[str, Path | pa.Table | None], new: Mapping[str, Path | pa.Table | None],
                      skip_entries: bool) -> dict[str, Any]:
    con = duckdb.connect()
    try:
        present: dict[str, dict[str, bool]] = {}
        for name in DATA_TABLES:
            o = _bind(con, "old", name, old.get(name))
            n = _bind(con, "new", name, new.get(name))
            present[name] = {"old": o, "new": n}
            if o and not n:
                _empty_like(con, f"new_{name}", f"old_{name}")
            elif n and not o:
                _empty_like(con, f"old_{name}", f"new_{name}")
        both = {name: p["old"] or p["new"] for name, p in present.items()}
        raw = {name: _keyed_diff(con, name, key) for name, key in KEYED.items() if both[name]}
        entries = _entries_diff(con) if both["entries"] and not skip_entries else None
    finally:
        con.close()

    out: dict[str, Any] = {"present": present}
    f = raw.get("films")
    if f is not None:
        id_changed = sorted(k[0] for k, cols in f["changed"].items() if "id" in cols)
        changed = [{"imdb_id": k[0], "columns": [c for c in cols if c not in FILM_IGNORED]}
                   for k, cols in f["changed"].items()]
        out["films"] = {
            "added": [k[0] for k in f["added"]],
            "removed": [k[0] for k in f["removed"]],
            "changed": [c for c in changed if c["columns"]],
            "id_changed": id_changed,
            "columns_added": f["columns_added"],
            "columns_removed": f["columns_removed"],
        }
    else:
        out["films"] = {"added": [], "removed": [], "changed": [], "id_changed": [],
                        "columns_added": [], "columns_removed": []}
    t = raw.get("tracks")
    out["tracks"] = {
        "added": [{"imdb_id": i, "language": lang} for i, lang in t["added"]] if t else [],
        "removed": [{"imdb_id": i, "language": lang} for i, lang in t["removed"]] if t else [],
        "changed": [{"imdb_id": k[0], "language": k[1], "columns": cols} for k, cols in t["changed"].items()] if t else [],
        "columns_added": t["columns_added"] if t else [],
        "columns_removed": t["columns_removed"] if t else [],
    }
    out["entries"] = entries or {"added": 0, "removed": 0, "changed": 0, "tracks": [],
                                 "columns_added": [], "columns_removed": []}
    r = raw.get("task_references")
    out["task_references"] = {
        "added": [k[0] for k in r["added"]] if r else [],
        "removed": [k[0] for k in r["removed"]] if r else [],
        "changed": [{"imdb_id": k[0], "columns": cols} for k, cols in r["changed"].items()] if r else [],
        "columns_added": r["columns_added"] if r else [],
        "columns_removed": r["columns_removed"] if r else [],
    }
    skip = set(out["films"]["added"]) | set(out["films"]["removed"])
    for name, label in (("ratings", "country"), ("language_safety", "category")):
        if name in raw:
            out[name] = _per_film(raw[name], label, skip)
        else:
            out[name] = {"films": [], "rows_added": 0, "rows_removed": 0, "rows_changed": 0,
                         "columns_added": [], "columns_removed": [], "key": label}
    out["change_kind"] = _kind(out)
    return out


def _kind(d: dict[str, Any]) -> str:
    for name, p in d["present"].items():
        if p["new"] and not p["old"]:
            return "major"  # legacy rule: an old release without a data table cannot be proven additive
        if p["old"] and not p["new"]:
            return "major"
    f, t, e, r = d["films"], d["tracks"], d["entries"], d["task_references"]
    sections = ("films", "tracks", "entries", "ratings", "language_safety", "task_references")
    schema_removed = any(d[s]["columns_removed"] for s in sections)
    schema_added = any(d[s]["columns_added"] for s in sections)
    if (f["removed"] or f["changed"] or f["id_changed"] or t["removed"] or t["changed"]
            or e["removed"] or e["changed"] or r["removed"] or r["changed"] or schema_removed
            or any(d[s]["rows_removed"] or d[s]["rows_changed"] for s in ("ratings", "language_safety"))):
        return "major"
    if (f["added"] or t["added"] or e["added"] or r["added"] or schema_added
            or any(d[s]["rows_added"] for s in ("ratings", "language_safety"))):
        return "minor"
    return "patch"


def _manifest(release_dir: Path) -> dict[str, Any]:
    path = release_dir / "manifest.json"
    if path.exists():
        return json.loads(path.read_text())
    return {}


def _table_files(release_dir: Path, manifest: dict[str, Any]) -> dict[str, dict[str, Any]]:
    files = manifest.get("files")
    if not files:  # no manifest: fall back to the Parquet files on disk
        files = {p.name: {} for p in release_dir.glob("*.parquet")}
    out = {}
    for fname, meta in files.items():
        if not fname.endswith(".parquet"):
            continue
        rows = meta.get("rows")
        path = release_dir / fname
        if rows is None and path.exists():
            rows = pq.ParquetFile(path).metadata.num_rows
        out[fname[: -len(".parquet")]] = {"rows": None if rows is None else int(rows), "sha256": meta.get("sha256")}
    return out


def diff_releases(old_dir: Path, new_dir: Path) -> dict[str, Any]:
    """Compare two release directories; deterministic, JSON-serialisable (see module docstring)."""
    old_dir, new_dir = Path(old_dir), Path(new_dir)
    for d in (old_dir, new_dir):
        if not d.is_dir():
            raise FileNotFoundError(f"diff_no_release: {d} is not a release directory")
    om, nm = _manifest(old_dir), _manifest(new_dir)
    data = _data_diff({n: old_dir / f"{n}.parquet" for n in DATA_TABLES},
                      {n: new_dir / f"{n}.parquet" for n in DATA_TABLES})
    ot, nt = _table_files(old_dir, om), _table_files(new_dir, nm)
    tables = {}
    for name in sorted(set(ot) | set(nt)):
        o, n = ot.get(name), nt.get(name)
        same = (o["sha256"] == n["sha256"]) if (o and n and o["sha256"] and n["sha256"]) else None
        tables[name] = {"old": o["rows"] if o else None, "new": n["rows"] if n else None, "same_bytes": same}
    return {
        "old": om.get("version") or old_dir.name,
        "new": nm.get("version") or new_dir.name,
        "films": data["films"],
        "tracks": data["tracks"],
        "entries": data["entries"],
        "ratings": data["ratings"],
        "language_safety": data["language_safety"],
        "task_references": data["task_references"],
        "tables": tables,
        "change_kind": data["change_kind"],
    }


def change_kind_from_tables(old_dir: Path, new_tables: Mapping[str, pa.Table]) -> str:
    """patch | minor | major for a release not yet written: ``new_tables`` are the Arrow tables
    exactly as they will be written (films without its raw JSON columns)."""
    old_dir = Path(old_dir)
    return _data_diff({n: old_dir / f"{n}.parquet" for n in DATA_TABLES},
                      {n: new_tables.get(n) for n in DATA_TABLES}, kind_only=True)["change_kind"]


def _head(items: list[str], n: int = 8) -> str:
    more = f" … (+{len(items) - n})" if len(items) > n else ""
    return ", ".join(items[:n]) + more


def render_diff_text(diff: dict[str, Any]) -> str:
    """Compact human summary of :func:`diff_releases` output."""
    f, t, e = diff["films"], diff["tracks"], diff["entries"]
    lines = [f"release {diff['old']} → {diff['new']}: {diff['change_kind']}"]
    lines.append(f"films   +{len(f['added'])} -{len(f['removed'])} ~{len(f['changed'])}")
    if f["added"]:
        lines.append(f"  added:   {_head(f['added'])}")
    if f["removed"]:
        lines.append(f"  removed: {_head(f['removed'])}")
    if f["changed"]:
        lines.append("  changed: " + _head([f"{c['imdb_id']} ({', '.join(c['columns'])})" for c in f["changed"]]))
    if f.get("id_changed"):
        lines.append(f"  id changed: {_head(f['id_changed'])}")
    lines.append(f"tracks  +{len(t['added'])} -{len(t['removed'])} ~{len(t['changed'])}")
    if t["changed"]:
        lines.append("  changed: " + _head([f"{c['imdb_id']}/{c['language']} ({', '.join(c['columns'])})"
                                            for c in t["changed"]]))
    lines.append(f"entries +{e['added']} -{e['removed']} ~{e['changed']} in {len(e['tracks'])} track(s)")
    r = diff.get("task_references")
    if r:
        lines.append(f"task references +{len(r['added'])} -{len(r['removed'])} ~{len(r['changed'])}")
        if r["changed"]:
            lines.append("  changed: " + _head([f"{c['imdb_id']} ({', '.join(c['columns'])})" for c in r["changed"]]))
    for name in ("ratings", "language_safety"):
        s = diff.get(name)
        if s:
            lines.append(f"{name}: +{s['rows_added']} -{s['rows_removed']} ~{s['rows_changed']} rows; "
                         f"{len(s['films'])} kept film(s) affected")
    for sect in ("films", "tracks", "entries", "ratings", "language_safety", "task_references"):
        s = diff.get(sect) or {}
        if s.get("columns_added") or s.get("columns_removed"):
            lines.append(f"{sect} columns +[{', '.join(s.get('columns_added', []))}] "
                         f"-[{', '.join(s.get('columns_removed', []))}]")
    if diff["tables"]:
        width = max(len(n) for n in diff["tables"])
        lines.append("tables (rows old → new; = same bytes, * bytes differ):")
        for name, c in diff["tables"].items():
            o = "-" if c["old"] is None else str(c["old"])
            n = "-" if c["new"] is None else str(c["new"])
            mark = {True: "  =", False: "  *", None: ""}[c["same_bytes"]]
            lines.append(f"  {name:<{width}}  {o:>8} → {n:<8}{mark}")
    return "\n".join(lines)
