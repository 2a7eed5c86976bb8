"""Stage ``acquire``: search providers for every eligible film and language, then download the
candidates the recovery chain needs next (sql/selection.sql), into the content-addressed raw
store. Same file id or same bytes → no second download or copy."""

from __future__ import annotations

from typing import Any

import duckdb

from cinesub.rawstore import RawStore
from cinesub.records import Candidate, utcnow
from cinesub.stage import Stage, StageContext
from flows.stages.common import make_provider, selection_views


class AcquireStage(Stage):
    name = "acquire"
    reads = ("films", "candidates", "tracks", "decisions", "blobs")
    writes = ("candidates", "blobs", "attempts")

    def __init__(self, round_no: int = 1, search: bool = True):
        self.round_no = round_no
        self.search = search
        self.name = f"acquire#{round_no}"

    def external_inputs(self, ctx: StageContext) -> dict[str, Any]:
        # The local provider's contents are an input; a network provider is searched every build.
        from flows.build import dir_digest
        from flows.stages.common import subtitles_root

        return {"subtitles": dir_digest(subtitles_root(ctx))}

    def run(self, ctx: StageContext, con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
        provider = make_provider(ctx)
        store = RawStore(ctx.settings.raw_dir)
        selection_views(con, ctx)
        stats = {"searched": 0, "candidates": 0, "downloaded": 0, "reused_blobs": 0, "failed": 0}
        if self.search:
            pairs = con.execute(
                "SELECT e.imdb_id, l.language FROM eligible_films e CROSS JOIN wanted_languages l ORDER BY 1, 2"
            ).fetchall()
            rows = []
            for imdb_id, language in pairs:
                found = provider.search(imdb_id, language)
                stats["searched"] += 1
                found.sort(key=lambda c: (-c.download_count, c.file_id))
                for rank, c in enumerate(found, start=1):
                    rows.append([c.imdb_id, c.language, c.provider, c.file_id, c.download_count, rank,
                                 c.uploader, c.release, c.fps, c.hearing_impaired, c.machine_translated,
                                 c.ai_translated, c.upload_date, c.feature_imdb_id, c.url])
            con.execute("BEGIN")
            con.execute("DELETE FROM candidates WHERE provider = ?", [getattr(provider, "name", "local")])
            if rows:
                con.executemany("INSERT INTO candidates VALUES (" + ",".join("?" * 15) + ")", rows)
            con.execute("COMMIT")
            stats["candidates"] = len(rows)

        needed = con.execute(
            "SELECT imdb_id, language, provider, file_id, rank, download_count FROM needed_candidates ORDER BY 1, 2"
        ).fetchall()
        known = dict(
            ((p, f), s) for p, f, s in con.execute("SELECT provider, file_id, sha256 FROM blobs").fetchall()
        )
        cand_meta = {
            (r[0], r[1]): r for r in con.execute(
                "SELECT provider, file_id, imdb_id, language, download_count, url FROM candidates").fetchall()
        }
        for imdb_id, language, prov, file_id, rank, count in needed:
            sha = known.get((prov, file_id))
            if sha is not None and store.has(sha):
                stats["reused_blobs"] += 1
                continue
            meta = cand_meta[(prov, file_id)]
            cand = Candidate(imdb_id=imdb_id, language=language, provider=prov, file_id=file_id,
                             download_count=count, url=meta[5])
            try:
                data = provider.download(cand)
            except Exception as exc:  # recorded with a reason code; the candidate is retried next build
                code = getattr(exc, "reason_code", type(exc).__name__)
                con.execute(
                    "INSERT INTO attempts VALUES (?, ?, ?, ?, ?, ?, NULL, 'download_failed', ?, ?)",
                    [ctx.run_id, imdb_id, language, prov, file_id, rank, f"{code}: {exc}"[:500], utcnow()],
                )
                stats["failed"] += 1
                continue
            sha, new = store.put(data)
            con.execute(
                "INSERT OR REPLACE INTO blobs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [prov, file_id, sha, len(data), meta[5], language, imdb_id, count, utcnow()],
            )
            stats["downloaded" if new else "reused_blobs"] += 1
        stats["needed"] = len(needed)
        return stats
