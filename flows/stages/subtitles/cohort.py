"""Stage ``cohort``: the funnel (SPEC A1 gates 1-6, sql/funnel.sql) and the duration-coverage
audit of every selected track against the English track of the same film (SPEC A5)."""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path
from typing import Any

import duckdb

from flows.kernel_context import RunContext, Stage
from cinesub.bulk import insert_rows
from cinesub.state import sql_text
from flows.stages.subtitles.common import chosen_countries, coverage_solver, eligible_views
from flows.stages.subtitles.item_cache import ItemCache
from validators.candidate import flag_rows

AUDIT_LAYERS = ("span_ratio", "token_ratio", "entry_ratio", "span_vs_english")

#: per audited track: the number of its released entries and three digests of their rows — the
#: XOR of each row's clean text's md5 (the one long column), the sum and the XOR of DuckDB's row
#: hashes of every column the measures read, in two orders — the key of its cached measures.
#: (An md5 of each whole row as JSON was 0.6 s of the 160-film rebuild's cohort stage; the text's
#: md5 alone is a quarter of it.)
_ENTRY_DIGESTS = """
SELECT e.track_id, count(*),
       bit_xor(md5_number(e.clean_content)),
       sum(hash(e.position, e."index", e.timeframe, e.start_ms, e.end_ms, e.clean_content)::HUGEINT),
       bit_xor(hash(e.clean_content, e.end_ms, e.start_ms, e.timeframe, e."index", e.position))
FROM entries e JOIN audit_tracks a USING (track_id)
WHERE e.clean_content IS NOT NULL
GROUP BY e.track_id"""


def _load_tokenizer_beside() -> threading.Thread:
    """Load the duration audit's ``o200k_base`` encoding in a thread (~0.5 s: tiktoken parses its
    BPE file) while the stage's DuckDB queries — the funnel, the entries' digests — run without
    the GIL. The stage joins it before it counts new texts; a stage with none to count does not
    wait for it (the daemon thread ends on its own, and the encoding stays loaded for the
    process); a failed load is raised again by the counting's own call."""
    from validators import duration_audit

    def run() -> None:
        try:
            duration_audit._encoding()
        except Exception:
            pass

    thread = threading.Thread(target=run, name="cohort-tokenizer", daemon=True)
    thread.start()
    return thread


def audit_cache(root: Path | None) -> ItemCache:
    """The duration audit's per-track measures under ``root`` (None: no cache), keyed by the code
    that computes them (this module, validators/duration_audit.py, warehouse/tokens.py, the cache
    itself), the token encoding and the DuckDB version (its row hash is part of the key)."""
    from validators import duration_audit
    from warehouse import tokens

    here = Path(__file__).resolve()
    code = (here, here.with_name("item_cache.py"), Path(duration_audit.__file__), Path(tokens.__file__))
    return ItemCache(root, code, duration_audit.TOKEN_ENCODING, "duckdb " + duckdb.__version__)


class CohortStage(Stage):
    name = "cohort"
    reads = ("films", "link_reviews", "selections", "ratings", "tracks", "decisions", "selected_attributes",
             "entries")
    writes = ("film_gates", "funnel", "flags", "coverage", "token_counts")

    def items_in_out(self, stats: dict[str, Any]) -> tuple[int | None, int | None, dict[str, int]]:
        # films at gate 1 in, cohort films out, dropped by the funnel's reasons
        funnel = stats.get("funnel") or []
        dropped: dict[str, int] = {}
        for g in funnel:
            for reason, n in (g.get("reasons") or {}).items():
                dropped[reason] = dropped.get(reason, 0) + int(n)
        first = funnel[0]["kept"] + funnel[0]["dropped"] if funnel else None
        return first, stats.get("cohort_films"), dropped

    def run(self, ctx: RunContext, con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
        from validators.duration_audit import audit

        tokenizer = _load_tokenizer_beside()  # joined before any text is counted
        return self._run(ctx, con, audit, tokenizer)

    def _run(self, ctx: RunContext, con: duckdb.DuckDBPyConnection, audit: Any, tokenizer: threading.Thread
             ) -> dict[str, Any]:
        eligible_views(con, ctx)
        con.execute("CREATE OR REPLACE TEMP TABLE wanted_countries (country VARCHAR)")
        insert_rows(con, "wanted_countries", [[c] for c in chosen_countries(con, ctx)])
        con.execute(sql_text("funnel.sql"))
        con.execute("BEGIN")
        con.execute("DELETE FROM film_gates")
        con.execute("INSERT INTO film_gates SELECT kim_id, imdb_id, dropped_at, reason, detail FROM film_gate_eval")
        con.execute("DELETE FROM funnel")
        con.execute("INSERT INTO funnel SELECT gate_no, gate, kept, dropped, reasons FROM funnel_now")

        # Duration audit over the selected tracks of cohort films (review flags; never deletes).
        con.execute(f"DELETE FROM flags WHERE layer IN {AUDIT_LAYERS}")
        rows = con.execute(
            """SELECT s.imdb_id, s.language, t.track_id, t.provider, t.file_id, t.first_start_ms,
                      t.last_end_ms, t.n_entries, t.n_tokens, t.runtime_min
               FROM selections s
               JOIN film_gates g ON g.imdb_id = s.imdb_id AND g.dropped_at IS NULL
               JOIN tracks t ON t.track_id = s.track_id
               ORDER BY s.imdb_id, s.language"""
        ).fetchall()
        cache = audit_cache(ctx.settings.home / "cache" / "cohort-audit")
        measures = self._audit_measures(con, sorted({r[2] for r in rows}), cache, tokenizer)
        by_film: dict[str, dict[str, dict]] = {}
        for imdb, lang, tid, prov, fid, first, last, _n_all, _words, runtime in rows:
            n_e, n_t, covered = measures.get(tid, (0, 0, 0))
            by_film.setdefault(imdb, {})[lang] = dict(
                track_id=tid, provider=prov, file_id=fid, first_start_ms=first, last_end_ms=last,
                n_entries=n_e, n_tokens=n_t, covered_ms=covered, runtime_min=runtime)
        n_flags = 0
        for imdb, tracks in by_film.items():
            english = tracks.get("en")
            if english is None:
                continue
            for lang, tr in tracks.items():
                for row in flag_rows(audit(tr, english, tr["runtime_min"], ctx.settings.thresholds)):
                    if lang == "en" and row["layer"] != "span_ratio":
                        continue
                    con.execute(
                        """INSERT INTO flags (track_id, imdb_id, language, provider, file_id, layer, severity,
                               value, threshold, detail, evidence) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                        [tr["track_id"], imdb, lang, tr["provider"], tr["file_id"], row["layer"], row["severity"],
                         row["value"], row["threshold"], row["detail"], row["evidence"]],
                    )
                    n_flags += 1
        coverage = self._coverage(ctx, con)
        con.execute("COMMIT")
        funnel = [
            {"gate_no": g, "gate": n, "kept": k, "dropped": d, "reasons": json.loads(r) if r else {}}
            for g, n, k, d, r in con.execute("SELECT * FROM funnel ORDER BY gate_no").fetchall()
        ]
        cohort = con.execute("SELECT count(*) FROM film_gates WHERE dropped_at IS NULL").fetchone()[0]
        return {"cohort_films": cohort, "audit_flags": n_flags, "funnel": funnel, "coverage": coverage,
                "audit_cache": cache.counts()}

    @staticmethod
    def _audit_measures(con: duckdb.DuckDBPyConnection, track_ids: list[str],
                        cache: ItemCache, tokenizer: threading.Thread | None = None
                        ) -> dict[str, tuple[int, int, int]]:
        """track_id → (entries, o200k_base tokens of the prompt-formatted track, covered ms) over
        the released entries (clean_content not null), as the release's entries table holds them.

        Incremental (docs/rebuilds.md): a track's measures are a pure function of its released
        entries, so they are kept in ``cache`` (:func:`audit_cache`) by the track id and a digest
        of those rows computed in SQL (:data:`_ENTRY_DIGESTS`: their number, the XOR of each
        row's clean text's md5, the sum and the XOR of DuckDB's row hashes over position, index,
        timeframe, start, end and clean text); only tracks without a valid entry are read and measured. Token
        counts stay in ``token_counts`` by the sha256 of the counted text (the release reads
        them there), so only new texts are tokenised; a cached text whose count is gone is a miss."""
        from validators.duration_audit import TOKEN_ENCODING, count_texts, covered_ms, prompt_text

        if not track_ids:
            return {}
        con.execute("CREATE OR REPLACE TEMP TABLE audit_tracks (track_id VARCHAR)")
        insert_rows(con, "audit_tracks", [[t] for t in track_ids])
        digests = {tid: f"{tid}|{n}|{x}|{h}|{y}" for tid, n, x, h, y in con.execute(_ENTRY_DIGESTS).fetchall()}
        known = dict(con.execute(
            "SELECT text_sha256, n_tokens FROM token_counts WHERE encoding = ?", [TOKEN_ENCODING]).fetchall())
        out: dict[str, tuple[int, int, int]] = {}
        for tid in sorted(digests):
            hit = cache.get(digests[tid], valid=lambda v: v["text_sha256"] in known and
                            all(isinstance(v[k], int) for k in ("n_entries", "covered_ms")))
            if hit is not None:
                out[tid] = (hit["n_entries"], int(known[hit["text_sha256"]]), hit["covered_ms"])
        todo = sorted(set(digests) - set(out))
        if not todo:
            return out
        con.execute("CREATE OR REPLACE TEMP TABLE audit_tracks (track_id VARCHAR)")
        insert_rows(con, "audit_tracks", [[t] for t in todo])
        df = con.sql(  # (a relation: DuckDB 2's execute() result has no .pl())
            """SELECT e.track_id, e."index", e.timeframe, e.start_ms, e.end_ms, e.clean_content AS content
               FROM entries e JOIN audit_tracks a USING (track_id)
               WHERE e.clean_content IS NOT NULL
               ORDER BY e.track_id, e.start_ms, e."index", e.position"""
        ).pl()
        texts: dict[str, tuple[str, str]] = {}  # track_id → (sha256, text)
        for part in df.partition_by("track_id", maintain_order=True):
            tid = part["track_id"][0]
            text = prompt_text(part)
            texts[tid] = (hashlib.sha256(text.encode()).hexdigest(), text)
            out[tid] = (part.height, 0, covered_ms(part))
        new = sorted({sha: text for sha, text in texts.values() if sha not in known}.items())
        if new:
            if tokenizer is not None:
                tokenizer.join()  # the encoding loaded beside the queries above (_load_tokenizer_beside)
            counts = count_texts([text for _, text in new])
            insert_rows(con, "token_counts", [[sha, TOKEN_ENCODING, n] for (sha, _), n in zip(new, counts)])
            known.update({sha: n for (sha, _), n in zip(new, counts)})
        for tid, (sha, _) in texts.items():
            out[tid] = (out[tid][0], int(known[sha]), out[tid][2])
            cache.put(digests[tid], {"n_entries": out[tid][0], "covered_ms": out[tid][2], "text_sha256": sha})
        return out

    @staticmethod
    def _coverage(ctx: RunContext, con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
        """SPEC A7 per-K table (exact search and frequency prefix) for languages, then countries,
        over the films that pass gates 2-4; English is required among the languages."""
        solve = coverage_solver(ctx)
        con.execute(sql_text("coverage_input.sql"))
        con.execute("DELETE FROM coverage")
        best: dict[str, Any] = {}
        sel = ctx.settings.selection
        for dim, view, pool, required in (
                ("languages", "coverage_languages", sel.language_pool_size, list(sel.languages_required)),
                ("countries", "coverage_countries", sel.country_pool_size, list(sel.countries_required))):
            pairs = con.execute(f"SELECT film_id, attribute FROM {view} ORDER BY 1, 2").fetchall()
            if not pairs:
                continue
            present = {a for _, a in pairs}
            result = solve(pairs, pool=pool, require=[r for r in required if r in present])
            for row in result["per_k"]:
                for method in ("search", "prefix"):
                    r = row.get(method)
                    con.execute(
                        "INSERT INTO coverage VALUES (?, ?, ?, ?, ?, ?)",
                        [dim, row["k"], method, ",".join(r["attributes"]) if r else None,
                         r["films"] if r else None, r["score"] if r else None],
                    )
            best[dim] = result["best"]
        return best
