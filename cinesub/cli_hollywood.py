"""``cinesub hollywood`` (build, review) and ``cinesub copyright status`` (SPEC B1, B2).

* ``hollywood build [--sample] [--home] [--config] [--as-of DATE] [--force] [--json]`` runs the
  ``build-hollywood`` Prefect flow (flows/hollywood.py) and prints the release path, the
  collection size and the evaluation summary (the whole summary with ``--json``).
* ``hollywood plan --years 1922-1979 [--sample] [--cce/--no-cce] [--json]``: items, leaves, kept
  pages (the page filter's measured keep rate, else ``hollywood.plan_keep_rate``), Gemini
  requests, tokens and a cost estimate from the named price settings; with ``--cce`` (default)
  also the CCE volumes (``extractors.ia.CCE_QUERY``: volumes, pages, image-only pages, Gemini
  requests/tokens/cost of the CCE page task) and a grand total — IA search/metadata only, Gemini
  never called.
* ``hollywood review list [--json]`` — the curator queues: aliases awaiting a decision, copyright
  matches awaiting review, and the curated decisions already recorded;
  ``hollywood review decide-alias YEAR ALIAS IMDB|none --by NAME`` and
  ``hollywood review decide-match REG_ID REG_DATE (--renewal RID | --not-renewed) --by NAME``
  write the curated tables of the Hollywood state DB, honoured by the next build.
* ``copyright status --as-of DATE [--json]`` (added to the existing ``copyright`` group) lists
  each collection film with its evidence (source works — AFI "based on" — included), every other
  ranked film with why it is excluded (``excluded``), and every registration's status, from the
  latest Hollywood release (or the state DB when nothing is published yet). When ``--as-of``
  differs from the release's, the statuses are
  recomputed with :func:`validators.copyright_status.classify` on the released registrations,
  renewals and source works (curator decisions included) and the collection is re-derived with the same SQL
  (sql/pd_collection.sql); films that leave or join it are listed.

Exit codes: 0 on success; 2 for bad input (message on stderr).
"""

from __future__ import annotations

import json
import os
import re
from datetime import date
from pathlib import Path
from typing import Any, Optional

import typer
from rich.console import Console

from cinesub import cli_common as common
from cinesub.cli_common import home_dir as _home

err = Console(stderr=True, soft_wrap=True)


def _fail(message: str) -> None:
    from cinesub.errors import UsageError

    raise UsageError(message)


def _date(value: str, what: str) -> date:
    try:
        return date.fromisoformat(value.strip())
    except ValueError:
        _fail(f"{what} {value!r} is not an ISO date (YYYY-MM-DD)")
        raise  # unreachable


# --------------------------------------------------------------------------------------------
# copyright status: evidence per collection film, recomputed for another as_of
# --------------------------------------------------------------------------------------------
_SOURCES = ("registrations", "renewals", "matches", "status", "top100", "film_links", "film_ia",
            "collection", "collection_candidates", "source_works")
#: an empty source-work table, for a release published before source works were released
_NO_SOURCE_WORKS = ("SELECT NULL::VARCHAR AS film_reg_id, NULL::DATE AS film_reg_date, NULL::VARCHAR AS source_title, "
                    "NULL::BOOLEAN AS renewed, NULL::VARCHAR AS renewal_id WHERE FALSE")


def _bind_release(con: Any, release_dir: Path) -> None:
    for name in _SOURCES:
        path = release_dir / f"{name}.parquet"
        if name == "source_works" and not path.is_file():
            con.execute(f"CREATE VIEW rel_{name} AS {_NO_SOURCE_WORKS}")
            continue
        con.execute(f"CREATE VIEW rel_{name} AS SELECT * FROM read_parquet('{path.as_posix()}')")


def _bind_state(con: Any, state_db: Path) -> None:
    con.execute(f"ATTACH '{state_db.as_posix()}' AS st (READ_ONLY)")
    for name in _SOURCES:
        table = "pd_top100" if name == "top100" else f"pd_{name}"
        con.execute(f"CREATE VIEW rel_{name} AS SELECT * FROM st.{table}")


def collection_status(home: Path, as_of: date) -> dict[str, Any]:
    """Each collection film with its evidence as of ``as_of`` (see the module docstring)."""
    import duckdb
    import pyarrow as pa

    from cinesub.settings import load_settings
    from cinesub.state import sql_text
    from flows.stages.hollywood.cce import load_matching_inputs, status_rows
    from flows.stages.hollywood.collection import bind_as_of
    from flows.stages.hollywood.common import pd_releases_dir, pd_state_db
    from validators.copyright_match import CuratorDecision
    from validators.copyright_status import SourceWork
    from warehouse.pd_release import read_manifest
    from warehouse.release import latest_version

    settings = load_settings(None, home)
    rdir = pd_releases_dir(settings)
    version = latest_version(rdir)
    con = duckdb.connect()
    source: dict[str, Any]
    if version and (rdir / version / "manifest.json").is_file():
        man = read_manifest(rdir / version)
        _bind_release(con, rdir / version)
        source = {"kind": "release", "version": version, "path": str(rdir / version), "as_of": man.get("as_of")}
    elif pd_state_db(settings).is_file():
        _bind_state(con, pd_state_db(settings))
        row = con.execute("SELECT max(as_of) FROM rel_status").fetchone()
        source = {"kind": "state_db", "path": str(pd_state_db(settings)),
                  "as_of": row[0].isoformat() if row and row[0] else None}
    else:
        raise FileNotFoundError(f"no Hollywood release or state DB under {home}: run `cinesub hollywood build` first")
    recomputed = source["as_of"] != as_of.isoformat()
    if recomputed:
        regs, rens = load_matching_inputs(con, "rel_registrations", "rel_renewals")
        decisions = [CuratorDecision(r, d.isoformat(), rid, "renewed" if dec == "curator_renewed" else "not_renewed",
                                     by or "curator")
                     for r, d, rid, dec, by in con.execute(
                         """SELECT reg_id, reg_date, renewal_id, decision, decided_by FROM rel_matches
                            WHERE decision IN ('curator_renewed', 'curator_not_renewed') AND reg_date IS NOT NULL""").fetchall()]
        sources = [SourceWork(r, d.isoformat() if d else None, t, rn, rid) for r, d, t, rn, rid in con.execute(
            """SELECT film_reg_id, film_reg_date, source_title, renewed, renewal_id FROM rel_source_works
               ORDER BY ALL""").fetchall()]
        matches, statuses = status_rows(regs, rens, decisions, as_of, sources)
        con.register("_st", pa.Table.from_pylist(statuses))
        con.register("_mt", pa.Table.from_pylist(matches))
        con.execute("CREATE VIEW cc_status AS SELECT reg_id, CAST(reg_date AS DATE) AS reg_date, title, status, rule, "
                    "reason, renewal_id, match_decision, CAST(as_of AS DATE) AS as_of FROM _st")
        con.execute("CREATE VIEW cc_matches AS SELECT * EXCLUDE (reg_date), CAST(reg_date AS DATE) AS reg_date FROM _mt")
    else:
        con.execute("CREATE VIEW cc_status AS SELECT * FROM rel_status")
        con.execute("CREATE VIEW cc_matches AS SELECT * FROM rel_matches")
    con.execute("CREATE VIEW cc_top100 AS SELECT * FROM rel_top100")
    con.execute("CREATE VIEW cc_links AS SELECT * FROM rel_film_links")
    con.execute("CREATE VIEW cc_ia AS SELECT * FROM rel_film_ia")
    con.execute("CREATE VIEW cc_source_works AS SELECT * FROM rel_source_works")
    bind_as_of(con, as_of)  # the release-date rule (R1_release_date) judges films as of this date
    con.execute(sql_text("pd_collection.sql"))

    def rows(sql: str) -> list[dict[str, Any]]:
        cur = con.execute(sql)
        cols = [d[0] for d in cur.description]
        return [dict(zip(cols, r)) for r in cur.fetchall()]

    coll = rows("""SELECT c.*, k.key_kind FROM cc_collection c
                   JOIN cc_candidates k ON k.key = c.key AND k.year = c.year ORDER BY c.year, c.rank, c.key""")
    sources_of: dict[tuple[Any, Any], list[dict[str, Any]]] = {}
    for w in rows("SELECT * FROM rel_source_works ORDER BY ALL"):
        sources_of.setdefault((w["film_reg_id"], w["film_reg_date"]), []).append(
            {"source_title": w["source_title"], "renewed": w["renewed"], "renewal_id": w["renewal_id"]})
    released = {r["key"] for r in rows("SELECT key FROM rel_collection")}
    now = {r["key"] for r in coll}
    films = []
    for c in coll:
        films.append({
            "key": c["key"], "imdb": c["key"] if c["key_kind"] == "imdb" else None, "title": c["title"],
            "year": c["year"], "rank": c["rank"], "gross": c["box_office"],
            "status": c["status"], "rule": c["rule"], "reason": c["status_reason"],
            "registration": {"reg_id": c["reg_id"], "reg_date": c["reg_date"].isoformat() if c["reg_date"] else None},
            "renewal_searched": {"searched": c["n_renewals_searched"] is not None,
                                 "renewal_records": c["n_renewals_searched"], "match_decision": c["match_decision"]},
            "renewal_matched": c["renewal_id"],
            "source_works": sources_of.get((c["reg_id"], c["reg_date"]), []),
            "ia_item": c["ia_item"], "sound": c["sound"],
        })
    excluded = []
    for c in rows("""SELECT * FROM cc_candidates WHERE NOT included
                     QUALIFY row_number() OVER (PARTITION BY key ORDER BY rank, year) = 1
                     ORDER BY year, rank, key"""):
        excluded.append({
            "key": c["key"], "imdb": c["key"] if c["key_kind"] == "imdb" else None, "title": c["title"],
            "year": c["year"], "rank": c["rank"], "status": c["status"], "rule": c["rule"],
            "reason": c["status_reason"], "exclusion_reasons": c["exclusion_reasons"],
            "verdict": c["verdict"], "review_reasons": c["review_reasons"],
            "registration": {"reg_id": c["reg_id"], "reg_date": c["reg_date"].isoformat() if c["reg_date"] else None},
            "source_works": sources_of.get((c["reg_id"], c["reg_date"]), []) if c["reg_id"] else [],
        })
    statuses = [{"reg_id": s["reg_id"], "reg_date": s["reg_date"].isoformat() if s["reg_date"] else None,
                 "title": s["title"], "status": s["status"], "rule": s["rule"], "reason": s["reason"],
                 "source_works": sources_of.get((s["reg_id"], s["reg_date"]), [])}
                for s in rows("SELECT * FROM cc_status ORDER BY reg_date NULLS LAST, reg_id")]
    con.close()
    return {"as_of": as_of.isoformat(), "source": source, "recomputed": recomputed, "collection": films,
            "left_collection": sorted(released - now), "joined_collection": sorted(now - released),
            "excluded": excluded, "statuses": statuses}


def _sources_text(sources: list[dict[str, Any]]) -> str:
    if not sources:
        return ""
    flag = {True: "renewed", False: "not renewed", None: "renewal unknown"}
    return " | based on " + "; ".join(f"“{w['source_title']}” {flag[w['renewed']]}"
                                      + (f" {w['renewal_id']}" if w["renewal_id"] else "") for w in sources)


def status_cmd(
    as_of: str = typer.Option(..., "--as-of", help="Status date, YYYY-MM-DD (e.g. 2026-01-01)."),
    home: Optional[Path] = typer.Option(None, "--home", help="CINESUB_HOME (default ./var)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON: the collection films with their evidence, "
                                 "the excluded ranked films with their reasons, and every registration's status."),
) -> None:
    """Each collection film with its evidence (from the latest Hollywood release), as of a date."""
    when = _date(as_of, "--as-of")
    try:
        res = collection_status(_home(home), when)
    except FileNotFoundError as exc:
        _fail(str(exc))
    if as_json:
        print(json.dumps(res, ensure_ascii=False, default=str))
        return
    src = res["source"]
    out = Console()
    out.print(f"collection as of {res['as_of']} ({len(res['collection'])} films) from {src['kind']} "
              f"{src.get('version') or src['path']}" + (" — statuses recomputed" if res["recomputed"] else ""))
    for f in res["collection"]:
        rs, reg = f["renewal_searched"], f["registration"]
        out.print(f"{f['title']} ({f['year']}): rank {f['rank']}, ${f['gross']:,.0f} | {f['status']} "
                  f"[{f['rule']}] {f['reason']} | registration {reg['reg_id']} {reg['reg_date']}; renewals "
                  f"searched {rs['renewal_records']} ({rs['match_decision']}), matched {f['renewal_matched'] or 'none'} "
                  f"| IA {f['ia_item']} ({f['sound']})" + _sources_text(f["source_works"]), highlight=False)
    for f in res["excluded"]:
        if f["source_works"]:  # the films a source work (AFI "based on") bears on
            out.print(f"excluded: {f['title']} ({f['year']}): {f['exclusion_reasons']} | {f['status']} "
                      f"[{f['rule']}] {f['reason']}" + _sources_text(f["source_works"]), highlight=False)
    for k, label in (("left_collection", "left the collection"), ("joined_collection", "joined the collection")):
        if res[k]:
            out.print(f"{label} as of {res['as_of']}: {', '.join(res[k])}")


# --------------------------------------------------------------------------------------------
# hollywood plan: what reading 1922-1979 would cost, before anything is spent
# --------------------------------------------------------------------------------------------
def parse_years(value: str) -> tuple[int, int]:
    """``"1922-1979"`` or ``"1934"`` → (first, last); a UsageError (exit 2) otherwise."""
    m = re.fullmatch(r"\s*(\d{4})\s*(?:-\s*(\d{4})\s*)?", value or "")
    if not m:
        _fail(f"--years {value!r} is not YEAR or FIRST-LAST (e.g. 1922-1979)")
    assert m is not None
    lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
    if lo > hi:
        _fail(f"--years {value!r}: the first year is after the last")
    if lo < 1905 or hi > date.today().year:
        _fail(f"--years {value!r}: Variety years run from 1905 to this year")
    return lo, hi


def item_page_count(meta: dict[str, Any], files: list[dict[str, Any]]) -> tuple[int | None, str]:
    """Leaves of an IA item from its metadata: MHDL's ``page-count`` (Variety items carry it),
    else the ``filecount`` of its ``_jp2.zip`` (one member per leaf), else ``imagecount`` (an
    estimate: not the page count on every item); ``(None, "none")`` when none is given."""
    for value, source in ((meta.get("page-count"), "page-count"),
                          (next((f.get("filecount") for f in files if str(f.get("name", "")).endswith("_jp2.zip")
                                 and f.get("filecount")), None), "jp2_filecount"),
                          (meta.get("imagecount"), "imagecount")):
        try:
            n = int(str(value).strip())
        except (TypeError, ValueError):
            continue
        if n > 0:
            return n, source
    return None, "none"


def measured_keep_rate(settings: Any) -> tuple[float, str, int]:
    """``(keep rate, source, pages measured)``: the page filter's decisions in the Hollywood state
    DB of the last build, else ``hollywood.plan_keep_rate``."""
    import duckdb

    from flows.stages.hollywood.common import pd_state_db

    db = pd_state_db(settings)
    if db.is_file():
        try:
            with duckdb.connect(str(db), read_only=True) as con:
                n, kept = con.execute("SELECT count(*), count(*) FILTER (WHERE keep) FROM pd_page_filter").fetchone()
        except duckdb.Error:
            n, kept = 0, 0
        if n:
            return kept / n, f"measured: page filter of the last build ({db})", int(n)
    return settings.hollywood.plan_keep_rate, "setting hollywood.plan_keep_rate", 0


def _plan_items(client: Any, ids: list[str], volume: bool = False) -> list[dict[str, Any]]:
    """Per item: leaves (:func:`item_page_count`) and, for CCE volumes (``volume``), the text
    layer and page images its ``files[]`` list — what the ``cce-discover`` stage will read:
    ``text_layer`` hocr | djvu_xml | None (``_djvu.txt`` only: the stage refuses the volume,
    reason ``no_page_index``), ``images`` jp2_zip | pdf | None. A refused item keeps its reason."""
    from extractors.ia_pages import derivatives
    from extractors.providers.errors import ProviderError

    items: list[dict[str, Any]] = []
    for ident in ids:
        row: dict[str, Any] = {"item_id": ident, "pages": None, "page_count_source": "none", "reason": None}
        try:
            files = client.list_files(ident)
            n, src = item_page_count(client.metadata(ident), files)
            row.update(pages=n, page_count_source=src, reason=None if n else "no_page_count")
            if volume:
                names = derivatives(files, ident)
                layer = ("hocr" if "searchtext" in names and "pageindex" in names
                         else "djvu_xml" if "djvu_xml" in names else None)
                row.update(text_layer=layer, images="jp2_zip" if "jp2_zip" in names else "pdf" if "pdf" in names else None)
                if layer is None and "djvu_txt" in names:
                    row["reason"] = "no_page_index"
                elif layer is None and row["images"] is None:
                    row["reason"] = "no_text_layer"  # neither text nor images: nothing to read
        except ProviderError as exc:
            row["reason"] = exc.reason_code
        items.append(row)
    return items


def _estimated_pages(items: list[dict[str, Any]]) -> tuple[int, int]:
    """(pages, items without a page count): those are estimated at the mean of the others."""
    known = [r["pages"] for r in items if r["pages"]]
    unknown = len(items) - len(known)
    mean = sum(known) / len(known) if known else 0.0
    return sum(known) + round(unknown * mean), unknown


def cce_plan(settings: Any, client: Any) -> dict[str, Any]:
    """The CCE registration and renewal volumes (``extractors.ia.CCE_QUERY``, the ``cce-discover``
    search; not limited by ``--years``: renewals of every year are searched): volumes, pages,
    pages without a text layer (``image_only``: read by Gemini, else Tesseract), and the Gemini
    requests, tokens and cost of the ``cce-parse`` stage, which reads every page image (image-only
    pages as the extraction, text pages as the cross-check). IA search and metadata only."""
    from collections import Counter

    from extractors.cce.gemini_pages import TASK
    from extractors.gemini_pages import plan_cost
    from extractors.ia import CCE_QUERY

    before = client.requests
    items = _plan_items(client, client.search_items(CCE_QUERY), volume=True)
    # refused by the stage (no_page_index, no_text_layer without images, a metadata failure):
    # nothing of it is read; a volume without a page count is estimated at the others' mean
    read = [r for r in items if r["reason"] in (None, "no_page_count")]
    pages, unknown = _estimated_pages(read)
    mean = pages / len(read) if read else 0.0

    def n(r: dict[str, Any]) -> int:
        return r["pages"] or round(mean)

    image_only = sum(n(r) for r in read if r["text_layer"] is None and r["images"])
    with_images = sum(n(r) for r in read if r["images"])
    return {"query": CCE_QUERY, "volumes": len(items), "volumes_read": len(read), "pages": pages,
            "pages_estimated_items": unknown,
            "text_layer_pages": sum(n(r) for r in read if r["text_layer"]),
            "image_only_pages": image_only, "gemini_pages": with_images,
            "text_layers": dict(Counter(str(r["text_layer"]) for r in items)),
            "page_count_sources": dict(Counter(r["page_count_source"] for r in items)),
            "item_reasons": dict(Counter(r["reason"] for r in items if r["reason"])),
            "gemini": plan_cost(with_images, settings.hollywood, TASK),
            "ia_requests": client.requests - before, "per_item": items}


def plan_total(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """The grand total of :func:`extractors.gemini_pages.plan_cost` answers."""
    out: dict[str, Any] = {"requests": 0, "input_tokens": 0, "output_tokens": 0,
                           "cost_usd": {"input": 0.0, "output": 0.0, "total": 0.0}}
    for g in parts:
        for k in ("requests", "input_tokens", "output_tokens"):
            out[k] += g[k]
        for k in ("input", "output", "total"):
            out["cost_usd"][k] = round(out["cost_usd"][k] + g["cost_usd"][k], 2)
    return out


def hollywood_plan(settings: Any, env: Any, years: tuple[int, int], cce: bool = True) -> dict[str, Any]:
    """Items, leaves, kept pages, Gemini requests, tokens and cost of reading Variety ``years``
    and (``cce``) the CCE volumes (:func:`cce_plan`), with a grand ``total``: IA search and
    metadata only (cheap); Gemini is never called. ``env``: an environment whose services are
    running."""
    from cinesub.rawstore import RawStore
    from extractors.gemini_pages import plan_cost
    from extractors.ia import variety_query
    from extractors.variety.gemini_pages import TASK

    hs = settings.hollywood
    client = env.ia_client(RawStore.for_settings(settings))
    items = _plan_items(client, client.search_items(variety_query(f"{years[0]}-01-01", f"{years[1]}-12-31")))
    pages, unknown = _estimated_pages(items)
    rate, rate_source, measured = measured_keep_rate(settings)
    kept = round(pages * rate)
    from collections import Counter

    res = {"years": list(years), "query": variety_query(f"{years[0]}-01-01", f"{years[1]}-12-31"),
           "environment": env.kind, "items": len(items), "pages": pages, "pages_estimated_items": unknown,
           "page_count_sources": dict(Counter(r["page_count_source"] for r in items)),
           "item_reasons": dict(Counter(r["reason"] for r in items if r["reason"])),
           "max_items": hs.max_items, "keep_rate": round(rate, 6), "keep_rate_source": rate_source,
           "keep_rate_pages_measured": measured, "kept_pages": kept,
           "gemini": plan_cost(kept, hs, TASK), "gemini_called": False, "ia_requests": client.requests,
           "per_item": items}
    res["cce"] = cce_plan(settings, client) if cce else None
    res["total"] = {**plan_total([res["gemini"]] + ([res["cce"]["gemini"]] if cce else [])),
                    "pages": pages + (res["cce"]["pages"] if cce else 0), "ia_requests": client.requests}
    return res


def _cost_lines(g: dict[str, Any]) -> list[str]:
    return [f"requests: {g['requests']:,} to {g['model']} ({g['mode']}; {g['worked_examples']} worked examples + "
            f"the page, {g['image_tokens']} tokens per image)",
            f"tokens: {g['input_tokens']:,} input, {g['output_tokens']:,} output",
            f"cost estimate: ${g['cost_usd']['total']:,.2f} (input ${g['cost_usd']['input']:,.2f}, output "
            f"${g['cost_usd']['output']:,.2f}; ${g['prices']['input_per_mtok']}/M in, "
            f"${g['prices']['output_per_mtok']}/M out x {g['prices']['price_factor']}; {g['prices']['source']})"]


def format_plan(res: dict[str, Any]) -> str:
    g = res["gemini"]
    lines = [f"plan for Variety {res['years'][0]}-{res['years'][1]} ({res['environment']}); nothing is spent",
             f"items: {res['items']}" + (f" ({res['pages_estimated_items']} without a page count: estimated)"
                                          if res["pages_estimated_items"] else ""),
             f"pages: {res['pages']:,}",
             f"kept pages: {res['kept_pages']:,} (keep rate {res['keep_rate']:.2%}, {res['keep_rate_source']})",
             *_cost_lines(g)]
    if g["minutes_at_rate_limit"] is not None:
        lines.insert(6, f"time at the rate limit: {g['minutes_at_rate_limit']:,} minutes")
    if res["item_reasons"]:
        lines.insert(2, "items refused: " + ", ".join(f"{k} {v}" for k, v in sorted(res["item_reasons"].items())))
    c = res.get("cce")
    if c:
        lines += ["", "CCE registration and renewal volumes (every year: renewals are searched for all)",
                  f"volumes: {c['volumes']}" + (f" ({c['volumes_read']} read)" if c["volumes_read"] != c["volumes"]
                                                else "")
                  + (f" ({c['pages_estimated_items']} without a page count: estimated)"
                     if c["pages_estimated_items"] else ""),
                  f"pages: {c['pages']:,} ({c['text_layer_pages']:,} with a text layer, {c['image_only_pages']:,} "
                  "image-only: read by Gemini, else Tesseract)",
                  f"pages Gemini reads: {c['gemini_pages']:,} (every page image: the extraction on image-only "
                  "pages, the cross-check of the OCR parser on text pages)",
                  *_cost_lines(c["gemini"])]
        if c["item_reasons"]:
            lines.insert(lines.index(f"pages: {c['pages']:,} ({c['text_layer_pages']:,} with a text layer, "
                                     f"{c['image_only_pages']:,} image-only: read by Gemini, else Tesseract)"),
                         "volumes refused: " + ", ".join(f"{k} {v}" for k, v in sorted(c["item_reasons"].items())))
    t = res.get("total")
    if t:
        lines += ["", f"total: {t['pages']:,} pages, {t['requests']:,} Gemini requests, {t['input_tokens']:,} input + "
                      f"{t['output_tokens']:,} output tokens, cost estimate ${t['cost_usd']['total']:,.2f}",
                  f"note: {g['max_tokens_fallback']}"]
    else:
        lines.append(f"note: {g['max_tokens_fallback']}")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# registration
# --------------------------------------------------------------------------------------------
def pd_review_queues(home: Path) -> dict[str, Any] | None:
    """The alias and copyright-match review queues and the curated decisions of the Hollywood
    state DB under ``home`` (None when there is none). `cinesub review list` shows them beside
    the track and entity-link queues, so curators have one place to look."""
    import duckdb

    from cinesub.settings import load_settings
    from flows.stages.hollywood.common import pd_state_db

    db = pd_state_db(load_settings(None, home))
    if not db.is_file():
        return None
    with duckdb.connect(str(db), read_only=True) as con:
        def rows(sql: str) -> list[dict[str, Any]]:
            cur = con.execute(sql)
            cols = [d[0] for d in cur.description]
            return [dict(zip(cols, r)) for r in cur.fetchall()]

        res = {
            "aliases": rows("""SELECT year, alias, n, imdb AS suggested_imdb, title, score, reason, runner_up
                               FROM pd_aliases WHERE decision = 'review' ORDER BY year, n DESC, alias"""),
            "matches": rows("""SELECT reg_id, CAST(reg_date AS VARCHAR) AS reg_date, title, renewal_id AS suggested_renewal,
                                      n_candidates, candidates, reasons
                               FROM pd_matches WHERE decision = 'matched_fuzzy_review' ORDER BY reg_date, reg_id"""),
            # cities the city map does not know: their grosses are left out until a curator adds
            # them to the map (hollywood.citymap_path)
            "cities": rows("""SELECT city, n_tuples, n_last_week, CAST(first_issue AS VARCHAR) AS first_issue,
                                     CAST(last_issue AS VARCHAR) AS last_issue
                              FROM pd_unknown_cities ORDER BY n_tuples DESC, city"""),
            "curated_aliases": rows("""SELECT year, alias, imdb, decided_by FROM pd_alias_decisions ORDER BY 1, 2"""),
            "curated_matches": rows("""SELECT reg_id, CAST(reg_date AS VARCHAR) AS reg_date, renewal_id, decision,
                                              decided_by FROM pd_match_decisions ORDER BY 1, 2"""),
        }
    res["counts"] = {k: len(v) for k, v in res.items()}
    return res


def register(app: typer.Typer) -> None:
    """Add the ``hollywood`` group and the ``copyright status`` command to the main CLI."""
    from cinesub.cli_copyright import copyright_app

    if not any(c.name == "status" for c in copyright_app.registered_commands):
        copyright_app.command("status")(status_cmd)
    hollywood_app = typer.Typer(help="The public-domain Hollywood collection (SPEC B1, B2): build, review.",
                                no_args_is_help=True)
    review_app = typer.Typer(help="Curator review queues: aliases and copyright matches.", no_args_is_help=True)
    hollywood_app.add_typer(review_app, name="review")
    app.add_typer(hollywood_app, name="hollywood")

    @hollywood_app.command("build")
    def build_cmd(
        sample: bool = typer.Option(False, "--sample", help="Build from the sample Variety and CCE worlds (offline)."),
        home: Optional[Path] = common.home_option(),
        config: Optional[Path] = common.config_option(),
        as_of: Optional[str] = typer.Option(None, "--as-of", help="Copyright status date (default hollywood.as_of, "
                                            "unset: the run date)."),
        force: bool = common.force_option(),
        as_json: bool = common.json_option("Print the build summary as JSON."),
        wait: bool = common.wait_option(),
        wait_timeout: Optional[float] = common.wait_timeout_option(),
        runner: Optional[str] = common.runner_option(),
        dask_address: Optional[str] = common.dask_address_option(),
    ) -> None:
        """Run the build-hollywood flow; print the release path, collection size and evaluation."""
        from cinesub.settings import load_settings

        h = common.build_home(home, config, wait_timeout)
        if as_of is not None:
            _date(as_of, "--as-of")
        common.check_runner(runner, dask_address)
        hs = load_settings(config, h).hollywood  # a bad config is an error before anything runs
        if not sample:
            if hs.catalog_path is None or not Path(hs.catalog_path).is_file():
                _fail("a live Hollywood build needs hollywood.catalog_path (a TSV imdb, title, year[, votes] derived "
                      "from IMDb title.basics; CINESUB_HOLLYWOOD__CATALOG_PATH), or use --sample")
        from extractors.providers.errors import ProviderError

        try:
            with common.build_session(h, wait, wait_timeout):
                from flows.hollywood import build_hollywood

                summary = build_hollywood(sample=sample, config=str(config) if config else None, home=str(h),
                                          as_of=as_of, force=force, runner=runner, dask_address=dask_address)
        except ProviderError as exc:
            # a network fault or refusal the bounded retries could not get past: the run is
            # recorded as failed in the Hollywood state DB, finished stages stay reusable
            err.print(
                f"[red]hollywood build stopped: {exc.reason_code}[/red]: {exc.detail}. Nothing was published; "
                "stages that finished are kept, and the next build resumes from them.", highlight=False)
            raise typer.Exit(5)
        from flows.hollywood import format_summary

        if as_json:
            print(json.dumps(summary, indent=2, default=str))
        else:
            Console().print(format_summary(summary), highlight=False)

    @hollywood_app.command("plan")
    def plan_cmd(
        years: str = typer.Option(..., "--years", help="Variety years, FIRST-LAST (e.g. 1922-1979) or one year."),
        sample: bool = typer.Option(False, "--sample", help="Plan against the sample world's IA fixture (offline)."),
        cce: bool = typer.Option(True, "--cce/--no-cce", help="Also plan the CCE registration and renewal volumes "
                                 "(all years) and print a grand total (default: on)."),
        home: Optional[Path] = common.home_option(),
        config: Optional[Path] = common.config_option(),
        as_json: bool = common.json_option("Print the plan as JSON (with the page count of every item)."),
    ) -> None:
        """Items, pages, kept pages, Gemini requests, tokens and a cost estimate, before anything
        is spent (IA search and metadata only; Gemini is never called)."""
        from cinesub.settings import load_settings
        from flows.env import environment

        span = parse_years(years)
        settings = load_settings(config, _home(home))
        env = environment(settings, sample)
        if sample:
            env.prepare("build-hollywood")  # the sample worlds (generated once)
        from extractors.providers.errors import ProviderError

        try:
            with env.services("build-hollywood"):
                res = hollywood_plan(settings, env, span, cce=cce)
        except ProviderError as exc:
            err.print(f"[red]hollywood plan stopped: {exc.reason_code}[/red]: {exc.detail}", highlight=False)
            raise typer.Exit(5)
        if as_json:
            print(json.dumps(res, ensure_ascii=False, default=str))
        else:
            Console().print(format_plan(res), highlight=False)

    @review_app.command("list")
    def review_list(home: Optional[Path] = typer.Option(None, "--home"),
                    as_json: bool = typer.Option(False, "--json")) -> None:
        """The alias and copyright-match review queues, and the curated decisions."""
        res = pd_review_queues(_home(home))
        if res is None:
            _fail(f"no Hollywood state DB under {_home(home)}: run `cinesub hollywood build` first")
        if as_json:
            print(json.dumps(res, ensure_ascii=False, default=str))
            return
        out = Console()
        out.print(f"aliases to review: {res['counts']['aliases']}; copyright matches to review: "
                  f"{res['counts']['matches']}; curated: {res['counts']['curated_aliases']} aliases, "
                  f"{res['counts']['curated_matches']} matches")
        for a in res["aliases"]:
            out.print(f"  alias {a['year']} {a['alias']!r} (seen {a['n']}): suggested {a['suggested_imdb']} "
                      f"{a['title']!r} score {a['score']:.3f} ({a['reason']})", highlight=False)
        for m in res["matches"]:
            out.print(f"  match {m['reg_id']} {m['reg_date']} {m['title']!r}: suggested renewal "
                      f"{m['suggested_renewal']} ({m['reasons']})", highlight=False)
        for c in res["cities"]:
            out.print(f"  unknown city {c['city']!r}: {c['n_tuples']} tuples ({c['n_last_week']} last week) left out; "
                      "add it to the city map (hollywood.citymap_path) to count them", highlight=False)

    @review_app.command("decide-alias")
    def decide_alias(
        year: int = typer.Argument(..., help="Variety year of the alias."),
        alias: str = typer.Argument(..., help="The title as printed (as in the review list)."),
        imdb: str = typer.Argument(..., help="The IMDb id (tt…), or 'none' for no IMDb record."),
        by: str = typer.Option(..., "--by", help="Curator name."),
        home: Optional[Path] = typer.Option(None, "--home"),
    ) -> None:
        """Record a curated alias decision (honoured by the next build)."""
        from cinesub.records import utcnow
        from cinesub.settings import load_settings
        from flows.stages.hollywood.common import pd_connect, pd_state_db

        value = None if imdb.strip().lower() == "none" else imdb.strip()
        if value is not None and not re.fullmatch(r"tt\d{7,}", value):
            _fail(f"IMDb id {imdb!r} is not tt followed by 7 or more digits (or 'none')")
        if not by.strip():
            _fail("--by must name the curator")
        alias_text = " ".join(alias.split())
        from cinesub.lock import home_lock

        with home_lock(_home(home)), pd_connect(pd_state_db(load_settings(None, _home(home)))) as con:
            con.execute("INSERT OR REPLACE INTO pd_alias_decisions VALUES (?, ?, ?, ?, ?)",
                        [year, alias_text, value, by.strip(), utcnow()])
        Console().print(f"alias {year} {alias_text!r} → {value or 'none'} (by {by.strip()}); the next build honours it",
                        highlight=False)

    @review_app.command("decide-match")
    def decide_match(
        reg_id: str = typer.Argument(..., help="Registration number, e.g. LP4689."),
        reg_date: str = typer.Argument(..., help="Registration date, YYYY-MM-DD."),
        renewal: Optional[str] = typer.Option(None, "--renewal", help="The renewal that renews it (e.g. R286002)."),
        not_renewed: bool = typer.Option(False, "--not-renewed", help="No renewal renews it."),
        by: str = typer.Option(..., "--by", help="Curator name."),
        home: Optional[Path] = typer.Option(None, "--home"),
    ) -> None:
        """Record a curated copyright-match decision (honoured by the next build)."""
        from cinesub.records import utcnow
        from cinesub.settings import load_settings
        from flows.stages.hollywood.common import pd_connect, pd_state_db

        if (renewal is None) == (not not_renewed):
            _fail("give exactly one of --renewal RID or --not-renewed")
        if not by.strip():
            _fail("--by must name the curator")
        when = _date(reg_date, "REG_DATE")
        decision = "renewed" if renewal else "not_renewed"
        from cinesub.lock import home_lock

        with home_lock(_home(home)), pd_connect(pd_state_db(load_settings(None, _home(home)))) as con:
            con.execute("INSERT OR REPLACE INTO pd_match_decisions VALUES (?, ?, ?, ?, ?, ?)",
                        [reg_id.strip(), when, renewal.strip() if renewal else None, decision, by.strip(), utcnow()])
        Console().print(f"{reg_id.strip()} ({when}) {decision}" + (f" by {renewal}" if renewal else "")
                        + f" (by {by.strip()}); the next build honours it", highlight=False)
