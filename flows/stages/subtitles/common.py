"""Helpers shared by the subtitle stages: the selection views, the cached coverage solver."""

from __future__ import annotations

import duckdb

from cinesub.bulk import insert_rows
from flows.kernel_context import RunContext
from cinesub.state import render_sql, sql_text
from validators.candidate import PROCESSING_VERSION


def chosen_languages(con: duckdb.DuckDBPyConnection, ctx: RunContext) -> tuple[str, ...]:
    """The languages the build acquires: those the survey stage chose (``selected_attributes``),
    ``Settings.languages`` when no survey ran (a stage run on its own)."""
    from warehouse.release import read_selection

    return read_selection(con, "languages", tuple(ctx.settings.languages))


def chosen_countries(con: duckdb.DuckDBPyConnection, ctx: RunContext) -> tuple[str, ...]:
    """The rating countries the build releases, in release order (as :func:`chosen_languages`)."""
    from warehouse.release import read_selection

    return read_selection(con, "countries", tuple(ctx.settings.countries))


def eligible_views(con: duckdb.DuckDBPyConnection, ctx: RunContext) -> None:
    """Create the temp table ``wanted_languages`` (the chosen languages: reads
    ``selected_attributes``) and the view of sql/eligible_films.sql (reads ``films``)."""
    languages = chosen_languages(con, ctx)
    con.execute("CREATE OR REPLACE TEMP TABLE wanted_languages (language VARCHAR)")
    insert_rows(con, "wanted_languages", [[lang] for lang in languages])
    con.execute(sql_text("eligible_films.sql"))


def selection_views(con: duckdb.DuckDBPyConnection, ctx: RunContext) -> None:
    """Create the temp views of sql/eligible_films.sql and sql/selection.sql (the recovery chain:
    reads ``films``, ``candidates``, ``attempts``, ``tracks``, ``decisions``)."""
    eligible_views(con, ctx)
    con.execute(
        render_sql(
            "selection.sql",
            max_candidates=ctx.settings.thresholds.max_candidates,
            processing_version=PROCESSING_VERSION,
        )
    )


def coverage_solver(ctx: RunContext):
    """:func:`validators.coverage_optimizer.solve`, its answers cached under
    ``CINESUB_HOME/cache/coverage/`` by the sha256 of the availability pairs, the arguments and
    the solver's source: a rebuild whose availability did not change (most do not) neither
    searches again nor loads the compiled kernel. The answer is the solver's own (its
    ``elapsed_s`` that of the run that computed it; ``stats.cached`` says it was read back)."""
    import hashlib
    import json
    from pathlib import Path

    from cinesub.digests import files_digest
    from cinesub.tmpfiles import write_text_atomic

    root = ctx.settings.home / "cache" / "coverage"
    validators_dir = Path(__file__).resolve().parents[3] / "validators"
    code = files_digest(validators_dir / name for name in ("coverage_optimizer.py", "coverage_batch.py"))

    def solve(avail, **kwargs):
        items = avail.items() if isinstance(avail, dict) else avail  # {film: attributes} or pairs
        pairs = sorted({(str(f), None if a is None else str(a)) for f, a in
                        ((f, a) for f, attrs in items for a in (attrs if isinstance(avail, dict) else [attrs]))},
                       key=lambda p: (p[0], p[1] is not None, p[1] or ""))
        key = hashlib.sha256(json.dumps([code, pairs, sorted(kwargs.items())], default=str)
                             .encode()).hexdigest()
        path = root / f"{key}.json"
        try:
            result = json.loads(path.read_text(encoding="utf-8"))
            result.setdefault("stats", {})["cached"] = True
            return result
        except (OSError, ValueError):
            pass
        from validators.coverage_optimizer import solve as compute

        text = json.dumps(compute(avail, **kwargs), default=str)
        write_text_atomic(path, text)
        return json.loads(text)  # the types a cached answer has (lists, not tuples)

    return solve
