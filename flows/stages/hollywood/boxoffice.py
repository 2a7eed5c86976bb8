"""Stages ``variety-aliases``, ``variety-aggregate`` and ``variety-evaluate`` (SPEC B1).

* aliases: per year, every title the primary extractor read at least ``alias_min_count`` times
  (:func:`validators.variety_aliases.aliases_to_resolve`), plus every alias a curator decided,
  resolved against the IMDb-like catalog (sample: the world's ``catalog.tsv``; live:
  ``hollywood.catalog_path``, a TSV ``imdb, title, year[, votes]`` derived from IMDb
  title.basics feature films) by :class:`validators.variety_aliases.AliasResolver`; the curated
  table ``pd_alias_decisions`` always wins; ``review`` rows are the curator queue.
* aggregate: the views of :func:`validators.boxoffice_ranking.define_views` over the primary
  extractor's tuples (SQL rules of sql/boxoffice_*.sql: last-week figures, US cities, shared
  grosses divided, Hollywood SHOWCASE totals out), copied into weekly / yearly / top-N tables and
  the exclusion audit by ``INSERT … SELECT`` (the tuples never pass through Python).
* evaluate: each extractor against gold pages (sample: the world's gold; live:
  ``hollywood.gold_dir`` when set) with :func:`validators.extraction_metrics.evaluate`, per issue and
  averaged with 95% bootstrap intervals, in long format.
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from flows.kernel_context import RunContext
from flows.stages.hollywood.common import PDStage, copy_select, file_digest, flush_rows, replace_rows

#: bootstrap resamples and seed of the evaluation intervals
EVAL_N_BOOT = 1000
EVAL_SEED = 0


def catalog_path(ctx: RunContext) -> Path | None:
    return ctx.env.hollywood_inputs().catalog


def read_catalog(path: Path) -> list[dict[str, Any]]:
    """Rows ``imdb, title, year[, votes]`` of a tab-separated catalog with a header."""
    with open(path, encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)
        missing = {"imdb", "title", "year"} - set(reader.fieldnames or [])
        if missing:
            raise ValueError(f"catalog {path}: missing column(s) {sorted(missing)}")
        return [r for r in reader if (r.get("imdb") or "").strip()]


class VarietyAliasesStage(PDStage):
    name = "variety-aliases"
    version = "1"
    reads = ("pd_tuples", "pd_alias_decisions")
    writes = ("pd_aliases", "pd_catalog_films")

    def external_inputs(self, ctx: RunContext) -> dict[str, Any]:
        return {"catalog": file_digest(catalog_path(ctx)), "primary": ctx.primary_extractor}

    def run(self, ctx: RunContext, con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
        from validators.variety_aliases import AliasResolver, aliases_to_resolve, count_aliases

        hs = ctx.settings.hollywood
        primary = ctx.primary_extractor
        path = catalog_path(ctx)
        if path is None or not path.is_file():
            from cinesub.errors import ConfigError

            raise ConfigError("no alias catalog: set hollywood.catalog_path (a TSV imdb, title, year[, votes] "
                              "derived from IMDb title.basics) or use --sample", "inputs_missing")
        rows = [{"movie": m, "issue_date": d} for m, d in con.execute(
            "SELECT movie, issue_date FROM pd_tuples WHERE extractor = ? AND movie IS NOT NULL", [primary]).fetchall()]
        counts = count_aliases(rows)
        wanted = {(y, a): n for y, a, n in aliases_to_resolve(rows, hs.alias_min_count)}
        curated_rows = con.execute("SELECT year, alias, imdb, decided_by FROM pd_alias_decisions").fetchall()
        curated = {(int(y), a): imdb for y, a, imdb, _ in curated_rows}
        curated_by = {(int(y), a): by for y, a, _, by in curated_rows}
        for (y, a) in curated:  # a curated alias is honoured whatever its count
            if a in counts.get(y, {}):
                wanted.setdefault((y, a), counts[y][a])
        catalog = read_catalog(path)
        resolver = AliasResolver(catalog)
        out = []
        for (year, alias), n in sorted(wanted.items()):
            s = resolver.resolve(alias, year, curated)
            if s.decided_by == "curated":
                decision, decided_by = ("curated" if s.imdb else "none"), f"curated:{curated_by[(year, alias)]}"
            else:
                decision, decided_by = s.decision, "suggested"
            out.append({"year": year, "alias": alias, "n": n, "imdb": s.imdb, "title": s.title,
                        "score": round(s.score, 6), "decision": decision, "reason": s.reason,
                        "decided_by": decided_by, "runner_up": s.runner_up})
        ids = {r["imdb"] for r in out if r["imdb"]} | {r["runner_up"] for r in out if r["runner_up"]}
        films = {}
        for c in catalog:
            if c["imdb"] in ids and c["imdb"] not in films:
                year = (c.get("year") or "").strip()
                votes = (c.get("votes") or "").strip()
                films[c["imdb"]] = {"imdb": c["imdb"], "title": c["title"],
                                    "year": int(year) if year.isdigit() else None,
                                    "votes": int(votes) if votes.isdigit() else None}
        replace_rows(con, "pd_aliases", out)
        replace_rows(con, "pd_catalog_films", sorted(films.values(), key=lambda r: r["imdb"]))
        return {"aliases": len(out), "decisions": dict(Counter(r["decision"] for r in out)),
                "review_queue": sum(r["decision"] == "review" for r in out), "catalog_rows": len(catalog)}


def citymap_table(path: Path | None) -> pa.Table:
    """The city map as the aggregation's input (original, normalized, state, country), plus one
    row per normalised name so extractor output that is already normalised is found too."""
    from extractors.variety.citymap import DEFAULT_CITYMAP

    rows = []
    with open(path or DEFAULT_CITYMAP, encoding="utf-8", newline="") as fh:
        for r in csv.DictReader(fh):
            rows.append({k: (r.get(k) or "").strip() or None for k in ("original", "normalized", "state", "country")})
    seen = {(r["original"] or "").lower() for r in rows}
    for r in list(rows):
        if r["normalized"] and r["normalized"].lower() not in seen:
            seen.add(r["normalized"].lower())
            rows.append({**r, "original": r["normalized"]})
    return pa.Table.from_pylist(rows)


#: result of the aggregation (validators.boxoffice_ranking.OUTPUTS) → the state table it fills
OUTPUT_TABLES = {"weekly": "pd_weekly", "yearly": "pd_yearly", "top100": "pd_top100", "excluded": "pd_excluded",
                 "unknown_cities": "pd_unknown_cities"}

#: pd_unknown_cities after the per-year aggregation: one row per city (sql/boxoffice_weekly.sql
#: ``bo_unknown_cities`` over all years)
UNKNOWN_CITIES_MERGED = """SELECT city, sum(n_tuples)::BIGINT AS n_tuples, sum(n_last_week)::BIGINT AS n_last_week,
       min(first_issue) AS first_issue, max(last_issue) AS last_issue
FROM pd_unknown_cities GROUP BY city ORDER BY n_tuples DESC, city"""


#: tuples the aggregation reads at a time, in whole issue years: years are packed into a chunk
#: while it stays within this many (a year of Variety is ≈24,000 tuples at the paper's 1.4M for
#: 1922–1979, so one year a chunk; a chunk's classified tuples are held as a TEMP table)
AGGREGATE_CHUNK_TUPLES = 10_000


def year_chunks(counts: list[tuple[int | None, int]], limit: int) -> list[str]:
    """``WHERE`` conditions on ``issue_date`` that cover ``counts`` (``(issue year or None,
    tuples)`` in year order) in runs of consecutive years of at most ``limit`` tuples (a year
    above it alone); tuples without a date are a chunk of their own."""
    out: list[str] = []
    run: list[int] = []
    size = 0

    def close() -> None:
        if run:
            out.append(f"issue_date >= DATE '{run[0]:04d}-01-01' AND issue_date < DATE '{run[-1] + 1:04d}-01-01'")
        run.clear()

    for year, n in counts:
        if year is None:
            continue
        if run and (size + n > limit or year != run[-1] + 1):
            close()
            size = 0
        run.append(int(year))
        size += n
    close()
    if any(year is None for year, _ in counts):
        out.append("issue_date IS NULL")
    return out


class VarietyAggregateStage(PDStage):
    name = "variety-aggregate"
    version = "2"  # 2: one issue year at a time (issue 17)
    reads = ("pd_tuples", "pd_aliases")
    writes = ("pd_weekly", "pd_yearly", "pd_top100", "pd_excluded", "pd_unknown_cities")

    def external_inputs(self, ctx: RunContext) -> dict[str, Any]:
        return {"citymap": file_digest(ctx.settings.hollywood.citymap_path),
                "primary": ctx.primary_extractor}

    def run(self, ctx: RunContext, con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
        from cinesub.state import render_sql
        from validators.boxoffice_ranking import Sql, define_views, output_query, reason_counts

        primary = ctx.primary_extractor
        hs = ctx.settings.hollywood
        # the tuples and aliases are read in place by DuckDB (sql/boxoffice_state_inputs.sql) and
        # the results copied with INSERT … SELECT: no tuple passes through Python (issue 17)
        con.execute(render_sql("boxoffice_state_inputs.sql", extractor=primary))
        citymap = citymap_table(hs.citymap_path)
        # whole issue years at a time (AGGREGATE_CHUNK_TUPLES): every rule of the
        # aggregation holds within a year (pages, weeks, the year's aliases, the yearly ranking),
        # so DuckDB holds a chunk's tuples, not all of them (issue 17: the 1.4M tuples of
        # 1922–1979 at once took this stage ≈0.35 GB above its start; by chunks of years, bounded)
        counts = con.execute("SELECT year(issue_date), count(*) FROM bo_state_tuples GROUP BY 1 ORDER BY 1 NULLS LAST"
                             ).fetchall()
        n = dict.fromkeys(OUTPUT_TABLES, 0)
        for table in OUTPUT_TABLES.values():
            copy_select(con, table, None)
        for where in year_chunks(counts, AGGREGATE_CHUNK_TUPLES):
            # the chunk's tuples once (a date range: DuckDB skips the row groups of other years),
            # then the five results from them
            con.execute(f"CREATE OR REPLACE TEMP TABLE bo_chunk_tuples AS SELECT * FROM bo_state_tuples WHERE {where}")
            define_views(con, Sql("bo_chunk_tuples"), citymap, Sql("bo_state_aliases"), top_n=hs.top_n,
                         materialize=True)
            for name, table in OUTPUT_TABLES.items():
                n[name] += copy_select(con, table, output_query(name), append=True)
            flush_rows(con)
        con.execute("DROP TABLE IF EXISTS bo_chunk_tuples")
        con.execute("DROP TABLE IF EXISTS _bo_classified_rows")
        # a city unknown in several years: one row, its counts summed over them
        con.execute(f"CREATE OR REPLACE TEMP TABLE bo_unknown_merged AS {UNKNOWN_CITIES_MERGED}")
        n["unknown_cities"] = copy_select(con, "pd_unknown_cities", "SELECT * FROM bo_unknown_merged")
        con.execute("DROP TABLE bo_unknown_merged")
        flush_rows(con)
        n_tuples = con.execute("SELECT count(*) FROM pd_tuples WHERE extractor = ?", [primary]).fetchone()[0]
        excluded = reason_counts(con.execute("SELECT reason, count(*) FROM pd_excluded GROUP BY ALL").fetchall())
        return {"primary": primary, "tuples": n_tuples, "weekly": n["weekly"], "yearly": n["yearly"],
                "top": n["top100"], "excluded": excluded, "unknown_cities": n["unknown_cities"]}


def gold_dir(ctx: RunContext) -> Path | None:
    return ctx.env.hollywood_inputs().gold_dir


def read_gold(folder: Path) -> list[dict[str, Any]]:
    """Gold tuples of ``gold/<item>/<leaf>.json`` pages, each with its item, page and issue date."""
    out = []
    for gp in sorted(folder.glob("*/*.json")):
        g = json.loads(gp.read_text(encoding="utf-8"))
        for t in g.get("tuples", []):
            out.append({**t, "item_id": g["item_id"], "page": g["page"], "issue_date": str(g["issue_date"])})
    return out


def evaluation_rows(extractor: str, model: str | None, result: dict[str, Any]) -> list[dict[str, Any]]:
    """Long-format rows of one :func:`validators.extraction_metrics.evaluate` result."""
    from validators.extraction_metrics import METRICS

    rows = []
    for r in result["per_issue"]:
        for metric in METRICS:
            rows.append({"extractor": extractor, "model": model, "scope": "issue", "issue": str(r["issue"]),
                         "metric": metric, "value": r[metric], "ci_low": None, "ci_high": None, "n_issues": 1,
                         "n_gold": r["n_gold_tuples"], "n_pred": r["n_pred_tuples"], "reason": r.get(f"{metric}_reason")})
    for metric in METRICS:
        s = result["summary"][metric]
        reasons = Counter(e["reason"] for e in s["excluded"])
        rows.append({"extractor": extractor, "model": model, "scope": "mean", "issue": None, "metric": metric,
                     "value": s["mean"], "ci_low": s["ci_low"], "ci_high": s["ci_high"], "n_issues": s["n_issues"],
                     "n_gold": result["n_gold_tuples"], "n_pred": result["n_pred_tuples"],
                     "reason": ", ".join(f"{n} {k}" for k, n in sorted(reasons.items())) or None})
    return rows


class VarietyEvaluateStage(PDStage):
    name = "variety-evaluate"
    version = "1"
    reads = ("pd_tuples",)
    writes = ("pd_evaluation",)

    def external_inputs(self, ctx: RunContext) -> dict[str, Any]:
        from flows.env import dir_digest

        g = gold_dir(ctx)
        return {"gold": dir_digest(g) if g and g.is_dir() else None}

    def run(self, ctx: RunContext, con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
        from validators.extraction_metrics import evaluate

        folder = gold_dir(ctx)
        if folder is None or not folder.is_dir():
            replace_rows(con, "pd_evaluation", [])
            return {"skipped": "no_gold_pages"}
        gold = read_gold(folder)
        rows: list[dict[str, Any]] = []
        summary: dict[str, Any] = {}
        for extractor, model in con.execute(
                "SELECT extractor, any_value(model) FROM pd_tuples GROUP BY 1 ORDER BY 1").fetchall():
            pred = [dict(zip(("item_id", "page", "issue_date", "theater", "city", "movie", "week", "gross"), r))
                    for r in con.execute(
                        """SELECT item_id, page, CAST(issue_date AS VARCHAR), theater, city, movie, week, gross
                           FROM pd_tuples WHERE extractor = ? ORDER BY item_id, page, seq""", [extractor]).fetchall()]
            res = evaluate(gold, pred, n_boot=EVAL_N_BOOT, seed=EVAL_SEED, issue_column="issue_date",
                           missing_pred_as_empty=True)
            rows += evaluation_rows(extractor, model, res)
            summary[extractor] = {m: res["summary"][m]["mean"] for m in ("spearman", "movie_f1", "tuple_f1")}
        replace_rows(con, "pd_evaluation", rows)
        return {"gold_tuples": len(gold), "extractors": summary}
