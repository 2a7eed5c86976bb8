"""The whole per-track pass at paper scale (issue 18 point 1): 6,072 tracks, 8.13M entries.

    python -m benchmarks.bench_checks [--quick] [--workers N] [--batch-tracks N] [--baseline-tracks N]

**Corpus.** Synthetic, generated before the clock starts (not committed): six languages in turn,
8,130,000 entries over 6,072 tracks (1,339 ± 250 each), dialogue from the sample world's phrase
banks (:mod:`cinesub.sample.phrases`), realistic timings, the distribution artefacts of each
language at the head and tail of every track, a narrative e-mail line in one track in ten, and
planted defects: one timing defect (``macro_interval``, ``block_lifespan``, ``delayed_onset``,
``chronology``, ``runtime_coverage`` in turn) every 50th track, a wrong-language track every 97th.
Each track is written as SRT bytes in its language's legacy code page where the text fits one
(en/id cp1252, ar cp1256, fa cp1256 with Arabic yeh, ro cp1250 with cedilla ş/ţ, vi cp1258 with
combining tone marks), UTF-8 for the wrong-language tracks, into a raw store (content addressed,
checked on read) like the one the build downloads into.

**Measured (the clock):** the production path of the ``process`` stage -- its jobs of
``--batch-tracks`` candidates (``Settings.process_batch_tracks``), its worker function
(:func:`flows.stages.subtitles.process._work`: read blob, decode, strict parse, every verification
layer incl. language identification, sanitization; :func:`validators.candidate.process_batch`) on
the item runner of the build (:class:`flows.items.LocalItemRunner`, ``--workers`` processes), its
writer (``ProcessStage._write_batch``: one DuckDB transaction per batch into a fresh state DB) --
then the release's entries Parquet (the ``release_entries`` query of sql/release_tables.sql over
the processed tracks, streamed by :func:`warehouse.publish.write_query_parquet`). Recorded: wall,
entries/s, the coordinator's time writing and waiting, peak RSS of the coordinator, of the largest
worker and of their sum during the pass (:class:`MemorySampler`),
flags per layer against the planted defects, sanitization actions against the planted artefacts,
rows in the DB and the Parquet against the corpus (a mismatch fails the run), and, on the first
``--baseline-tracks`` tracks in-process, the time of each step (decode, parse, checks,
sanitize).

**Baseline, same run:** the same work with ``chardet`` (encoding), ``srt`` (parse), ``langdetect``
(seeded, on the same ~200-character chunks, at most the same number per track), the timing rules
as a per-entry Python loop (:func:`python_loop_timing`) and sanitization as a per-entry loop of the
pattern file's regexes (``regex`` module), the entries written the same way (Arrow into DuckDB, the
same Parquet), on the first ``--baseline-tracks`` tracks in one process, projected linearly to the
whole corpus on ``--workers`` processes (perfect parallel speed-up assumed for the baseline: the
projection favours it). ``--quick`` runs 1/20 of the corpus (303 tracks) and also records its
linear projection. Results go to ``benchmarks/results/bench_checks.json`` under ``quick`` or
``full``; the other key is kept.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sys
import time
import unicodedata
from fractions import Fraction
from pathlib import Path
from typing import Any

import polars as pl

from benchmarks.checks_corpus import (  # noqa: F401  (LEGACY, make_batch, srt_bytes, track_lengths: for the smoke test)
    LANGS, LEGACY, PAPER_ENTRIES, PAPER_TRACKS, expected_layers, key_of, make_batch, srt_bytes, track_lengths,
    write_corpus,
)

REPO = Path(__file__).resolve().parent.parent
RESULTS_FILE = REPO / "benchmarks" / "results" / "bench_checks.json"

# --------------------------------------------------------------------------------------------
# the baseline: srt + chardet + langdetect + Python loops
# --------------------------------------------------------------------------------------------
def python_loop_timing(entries: list[tuple[int, int, int]], runtime_min: float | None, th) -> dict[str, float]:
    """{layer: value} of the timing layers over (index, start_ms, end_ms) tuples in file order;
    the same rules, boundaries and values as validators.checks."""
    from validators.checks import exact_fraction, minutes_to_ms

    block_limit = minutes_to_ms(th.block_lifespan_min)
    onset_limit = minutes_to_ms(th.delayed_onset_min)
    gap_limit = minutes_to_ms(th.macro_interval_min)
    worst_neg = worst_block = worst_gap = None
    first_start = last_end = prev_end = None
    for _index, start, end in entries:
        d = end - start
        if d < 0 and (worst_neg is None or d < worst_neg):
            worst_neg = d
        if d >= block_limit and (worst_block is None or d > worst_block):
            worst_block = d
        if first_start is None or start < first_start:
            first_start = start
        if last_end is None or end > last_end:
            last_end = end
        if prev_end is not None:
            g = start - prev_end
            if g >= gap_limit and (worst_gap is None or g > worst_gap):
                worst_gap = g
        prev_end = end
    out: dict[str, float] = {}
    if worst_neg is not None:
        out["chronology"] = float(worst_neg)
    if worst_block is not None:
        out["block_lifespan"] = worst_block / 60_000
    if first_start is not None and first_start > onset_limit:
        out["delayed_onset"] = first_start / 60_000
    if runtime_min and last_end is not None:
        ratio = Fraction(max(last_end, 0), minutes_to_ms(runtime_min))
        if ratio < exact_fraction(th.runtime_coverage_min_ratio):
            out["runtime_coverage"] = float(ratio)
    if worst_gap is not None:
        out["macro_interval"] = worst_gap / 60_000
    return out



def _chunk_texts(contents: list[str], chunk_chars: int, max_chunks: int) -> list[str]:
    """Consecutive entries joined into ~chunk_chars chunks, at most max_chunks evenly spread."""
    chunks, cur, size = [], [], 0
    for text in contents:
        cur.append(text)
        size += len(text) + 1
        if size >= chunk_chars:
            chunks.append(" ".join(cur))
            cur, size = [], 0
    if cur:
        chunks.append(" ".join(cur))
    if len(chunks) <= max_chunks:
        return chunks
    return [chunks[round(i * (len(chunks) - 1) / (max_chunks - 1))] for i in range(max_chunks)]


def baseline_track(raw: bytes, language: str, runtime_min: float, th, patterns) -> dict[str, Any]:
    """One track the library way; returns its layers, sanitization counts and entry rows."""
    import chardet
    import langdetect
    import regex
    import srt

    from validators.language import CHUNK_CHARS, MAX_CHUNKS

    enc = chardet.detect(raw)["encoding"] or "utf-8"
    text = raw.decode(enc, errors="replace")
    subs = list(srt.parse(text))
    rows = [(s.index, int(s.start.total_seconds() * 1000), int(s.end.total_seconds() * 1000), s.content)
            for s in subs]
    layers = sorted(python_loop_timing([(i, a, b) for i, a, b, _ in rows], runtime_min, th))
    langdetect.DetectorFactory.seed = 0
    votes: dict[str, int] = {}
    for chunk in _chunk_texts([unicodedata.normalize("NFC", c) for *_, c in rows], CHUNK_CHARS, MAX_CHUNKS):
        try:
            lang = langdetect.detect(chunk)
        except langdetect.LangDetectException:
            lang = "und"
        votes[lang] = votes.get(lang, 0) + 1
    if votes.get(language, 0) < th.language_min_share * sum(votes.values()):
        layers = sorted(layers + ["language_mismatch"])
    active = [(p, regex.compile(p.regex)) for p in patterns.for_language(language)]
    removed = modified = 0
    clean = []
    for *_, content in rows:
        norm = unicodedata.normalize("NFC", content)
        if any(rx.search(norm) for p, rx in active if p.action == "remove_entry"):
            removed += 1
            clean.append(None)
            continue
        residue, redact = norm, False
        for p, rx in active:
            if p.action != "remove_entry" and rx.search(residue):
                redact |= p.action == "redact"
                residue = rx.sub(" ", residue)
        if residue != norm and not regex.search(r"\p{L}", residue):
            removed += 1
            clean.append(None)
        elif redact:
            modified += 1
            clean.append(next(rx for p, rx in active if p.action == "redact").sub("[email redacted]", content))
        else:
            clean.append(content)
    return {"layers": layers, "removed": removed, "modified": modified, "rows": rows, "clean": clean,
            "encoding": enc}


def run_baseline(tracks: list[dict[str, Any]], store, workdir: Path) -> dict[str, Any]:
    """The library baseline over ``tracks`` in this process, written like the pass; timed."""
    import duckdb
    import pyarrow as pa

    from cinesub.settings import Thresholds
    from cinesub.state import init_state
    from cinesub.bulk import insert_arrow
    from validators.sanitize import load_patterns
    from warehouse.publish import write_query_parquet

    th, patterns = Thresholds(), load_patterns()
    db = workdir / "baseline.duckdb"
    init_state(db)
    t0 = time.perf_counter()
    found = []
    with duckdb.connect(str(db)) as con:
        for m in tracks:
            r = baseline_track(store.get(m["sha"]), m["language"], m["runtime_min"], th, patterns)
            tid = str(m["track_no"])
            table = pa.table({"track_id": [tid] * len(r["rows"]), "position": list(range(len(r["rows"]))),
                              "index": [x[0] for x in r["rows"]],
                              "timeframe": [""] * len(r["rows"]),
                              "start_ms": [x[1] for x in r["rows"]], "end_ms": [x[2] for x in r["rows"]],
                              "content": [x[3] for x in r["rows"]], "clean_content": r["clean"]})
            con.execute("BEGIN")
            insert_arrow(con, "entries", table)
            con.execute("COMMIT")
            found.append(r)
        write_query_parquet(con, "SELECT * FROM entries WHERE clean_content IS NOT NULL ORDER BY track_id, "
                                 "start_ms, position", workdir / "baseline_entries.parquet")
    wall = time.perf_counter() - t0
    wrong = [m["track_no"] for m, r in zip(tracks, found)
             if r["layers"] != expected_layers(m) or r["removed"] != m["boilerplate"] or r["modified"] != m["emails"]]
    return {"name": "srt+chardet+langdetect", "tracks": len(tracks), "entries": sum(m["n"] for m in tracks),
            "wall_s": round(wall, 2), "tracks_not_matching_planted": len(wrong), "not_matching_sample": wrong[:10],
            "versions": _versions("srt", "chardet", "langdetect", "regex")}


def _versions(*names: str) -> dict[str, str]:
    from importlib.metadata import version

    return {n: version(n) for n in names}


# --------------------------------------------------------------------------------------------
# the production pass
# --------------------------------------------------------------------------------------------
def peak_rss_mib(who: int = resource.RUSAGE_SELF) -> float:
    return resource.getrusage(who).ru_maxrss / 1024


class MemorySampler:
    """Resident memory of this process and of its worker processes while the pass runs, polled
    every ``interval`` s (psutil): per process its own high-water mark (``VmHWM``, so a peak
    between two polls still counts; this process's is reset on entry; ``ru_maxrss`` of children
    carries the parent's peak at fork), and the largest sum of the processes' current RSS seen at one poll -- the whole
    pass's footprint (shared pages counted once per process: an upper bound)."""

    def __init__(self, interval: float = 0.1):
        import threading

        self.interval = interval
        self.peaks: dict[int, float] = {}
        self.cpu_s: dict[int, float] = {}  # CPU seconds (user + system) of each process, last poll
        self.sum_peak = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="rss-sampler", daemon=True)

    def __enter__(self) -> MemorySampler:
        try:  # this process's high-water mark from here on (not the corpus generation before it)
            with open("/proc/self/clear_refs", "w") as fh:
                fh.write("5")
        except OSError:
            pass
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join()

    def _poll(self) -> None:
        import psutil

        me = psutil.Process()
        total = 0.0
        for proc in [me, *me.children(recursive=True)]:
            try:
                info = proc.memory_info()
                hwm = _vm_hwm_mib(proc.pid)
                cpu = proc.cpu_times()
            except (psutil.Error, OSError):
                continue
            rss = info.rss / 2**20
            total += rss
            self.peaks[proc.pid] = max(self.peaks.get(proc.pid, 0.0), rss, hwm or 0.0)
            self.cpu_s[proc.pid] = cpu.user + cpu.system
        self.sum_peak = max(self.sum_peak, total)

    def _run(self) -> None:
        while not self._stop.is_set():
            self._poll()
            self._stop.wait(self.interval)
        self._poll()

    def worker_cpu_s(self) -> float:
        """CPU seconds of the worker processes (all of them, as of the last poll; their start-up
        included)."""
        me = os.getpid()
        return round(sum(v for pid, v in self.cpu_s.items() if pid != me), 2)

    def summary(self) -> dict[str, float]:
        me = os.getpid()
        workers = [v for pid, v in self.peaks.items() if pid != me]
        return {"coordinator": round(self.peaks.get(me, 0.0), 1),
                "largest_worker": round(max(workers, default=0.0), 1),
                "workers_seen": len(workers),
                "sum_peak_sampled": round(self.sum_peak, 1)}


def _vm_hwm_mib(pid: int) -> float | None:
    """``VmHWM`` of process ``pid`` (Linux), MiB; None elsewhere."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


class _Ctx:
    """What ``ProcessStage._write_batch`` reads of a run context."""

    run_id = "bench"

    @staticmethod
    def item_done(kind: str, con: Any = None) -> None:
        return None


def run_pass(tracks: list[dict[str, Any]], store, workdir: Path, workers: int, batch_tracks: int) -> dict[str, Any]:
    """The process stage's jobs, worker function, item runner and writer, then the entries Parquet."""
    import duckdb

    from cinesub.settings import Thresholds
    from cinesub.state import checkpoint, coordinator_threads, entry_key_duplicates, init_state, memory_limit, thread_limit
    from flows.items import LocalItemRunner
    from flows.stages.subtitles import process as P
    from warehouse.publish import write_query_parquet

    db = workdir / "state.duckdb"
    init_state(db)
    stage = P.ProcessStage()
    by_key = {key_of(m): m for m in tracks}
    jobs = P.batches([(store.url_for(m["sha"]), m["sha"], m["language"], m["runtime_min"], key_of(m))
                      for m in tracks], batch_tracks, Thresholds().model_dump_json(), "default")
    stats: dict[str, Any] = {"processed": 0, "ok": 0, "flagged": 0, "rejected": 0, "entries": 0}
    found: dict[tuple, Any] = {}
    write_s = write_cpu = 0.0
    t0, c0 = time.perf_counter(), time.process_time()
    runner = LocalItemRunner(workers)
    sampler = MemorySampler()
    try:
        with sampler, duckdb.connect(str(db)) as con, memory_limit(con):  # as the stage and the release
            with thread_limit(con, coordinator_threads(workers)):  # as the stage's pass
                for result in runner.map(P._work, jobs, P._work_failed):
                    if isinstance(result, P._Retry):
                        raise RuntimeError("a batch's worker failed: the benchmark corpus has no poison file")
                    t, c = time.perf_counter(), time.process_time()
                    stage._write_batch(con, _Ctx(), result, stats)
                    write_s += time.perf_counter() - t
                    write_cpu += time.process_time() - c
                    for key, out in result:
                        found[key] = (sorted(out.reasons), out.status,
                                      int((out.sanitization["action"] == "removed").sum()) if out.sanitization is not None else -1,
                                      int((out.sanitization["action"] == "modified").sum()) if out.sanitization is not None else -1)
                checkpoint(con)  # as the stage: the pass's rows into the file before the limit goes
            t_pass, c_pass = time.perf_counter(), time.process_time()
            sampler._poll()
            rss_pass, workers_cpu = dict(sampler.summary()), sampler.worker_cpu_s()
            parquet = workdir / "entries.parquet"
            con.execute("""CREATE TEMP VIEW release_tracks AS SELECT * FROM tracks WHERE status <> 'rejected'""")
            write_query_parquet(con, 
                """SELECT e.track_id, t.imdb_id, t.language, e."index", e.timeframe, e.start_ms, e.end_ms,
                          e.clean_content AS content
                   FROM entries e JOIN release_tracks t USING (track_id)
                   WHERE e.clean_content IS NOT NULL
                   ORDER BY t.imdb_id, t.language, e.start_ms, e.position""", parquet)
            t_end, c_end = time.perf_counter(), time.process_time()
            db_entries = con.execute("SELECT count(*) FROM entries").fetchone()[0]
            db_tracks = con.execute("SELECT count(*) FROM tracks").fetchone()[0]
            key_duplicates = entry_key_duplicates(con)[0]
    finally:
        runner.close()
    import pyarrow.parquet as pq

    mismatches = []
    flags: dict[str, int] = {}
    planted: dict[str, int] = {}
    removed = modified = 0
    for key, m in by_key.items():
        reasons, status, n_removed, n_modified = found[key]
        # a wrong-language track in UTF-8 may also raise the decoder's `encoding` review flag
        # (its bytes do not read as the expected language): counted, not a mismatch
        layers = [r for r in reasons if not (m["wrong_language"] and r == "encoding")]
        for layer in reasons:
            flags[layer] = flags.get(layer, 0) + 1
        for layer in expected_layers(m):
            planted[layer] = planted.get(layer, 0) + 1
        removed += n_removed
        modified += n_modified
        if layers != expected_layers(m) or n_removed != m["boilerplate"] or n_modified != m["emails"]:
            mismatches.append({"track": m["track_no"], "language": m["language"], "encoding": m["encoding"],
                               "flags": reasons, "planted": expected_layers(m), "removed": n_removed,
                               "modified": n_modified})
    n_entries = sum(m["n"] for m in tracks)
    parquet_rows = pq.read_metadata(parquet).num_rows
    want_rows = n_entries - sum(m["boilerplate"] for m in tracks)
    if db_entries != n_entries or db_tracks != len(tracks) or parquet_rows != want_rows or key_duplicates:
        mismatches.append({"db_entries": db_entries, "db_tracks": db_tracks, "parquet_rows": parquet_rows,
                           "want_entries": n_entries, "want_parquet_rows": want_rows,
                           "entry_key_duplicates": key_duplicates})
    return {"wall_s": round(t_end - t0, 2), "process_and_write_s": round(t_pass - t0, 2),
            "coordinator_write_s": round(write_s, 2), "parquet_s": round(t_end - t_pass, 2),
            "cpu_s": {"coordinator_pass": round(c_pass - c0, 2), "coordinator_writes": round(write_cpu, 2),
                      "workers_pass": workers_cpu, "parquet": round(c_end - c_pass, 2),
                      "total": round(c_end - c0 + workers_cpu, 2)},
            "entries_per_s": round(n_entries / (t_end - t0)), "stats": stats, "flags_by_layer": dict(sorted(flags.items())),
            "planted_by_layer": dict(sorted(planted.items())),
            "sanitization": {"removed": removed, "modified": modified,
                             "planted_artefacts": sum(m["boilerplate"] for m in tracks),
                             "planted_emails": sum(m["emails"] for m in tracks)},
            "rss_mib_sampled": {"after_process_and_write": rss_pass, "after_parquet": sampler.summary()},
            "db_entries": db_entries, "parquet_rows": parquet_rows, "parquet_mib": round(parquet.stat().st_size / 2**20, 1),
            "mismatches": mismatches[:20], "n_mismatches": len(mismatches)}


def phase_seconds(tracks: list[dict[str, Any]], store, batch_tracks: int) -> dict[str, float]:
    """Where a worker's time goes, on ``tracks`` in this process: per step (validators.candidate
    timings; checks and sanitize for whole batches), blob read and outcome building the rest."""
    from cinesub.settings import Thresholds
    from validators import candidate as C

    th = Thresholds()
    out = {"decode": 0.0, "parse": 0.0, "checks": 0.0, "sanitize": 0.0}
    t0 = time.perf_counter()
    for b in range(0, len(tracks), batch_tracks):
        part = tracks[b:b + batch_tracks]
        runs = [C.decode_and_parse(store.get(m["sha"]), m["language"]) for m in part]
        C.verify_runs(runs, [m["language"] for m in part], [m["runtime_min"] for m in part], th)
        for r in runs:
            for k in out:
                out[k] += r.timings.get(k, 0.0)
    total = time.perf_counter() - t0
    out = {k: round(v, 2) for k, v in out.items()}
    out["total"] = round(total, 2)
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    import tempfile

    from cinesub.rawstore import RawStore

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="1/20 of the paper-scale corpus")
    ap.add_argument("--tracks", type=int, default=None, help="a corpus of this many tracks (tests)")
    ap.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1), help="worker processes")
    ap.add_argument("--batch-tracks", type=int, default=None, help="candidates per job (default: the setting)")
    ap.add_argument("--baseline-tracks", type=int, default=None, help="tracks for the library baseline")
    ap.add_argument("--no-write", action="store_true", help="do not write benchmarks/results")
    args = ap.parse_args(argv)
    from cinesub.settings import Settings

    batch_tracks = args.batch_tracks or Settings.model_fields["process_batch_tracks"].default
    scale = 20 if args.quick else 1
    n_tracks = args.tracks or PAPER_TRACKS // scale
    n_entries = round(PAPER_ENTRIES / PAPER_TRACKS * n_tracks)
    baseline_tracks = min(args.baseline_tracks or (60 if not args.quick else 12), n_tracks)
    mode = "quick" if args.quick else "full" if args.tracks is None else "custom"
    print(f"bench_checks ({mode}): {n_tracks} tracks, {n_entries} entries, {args.workers} worker(s), "
          f"jobs of {batch_tracks} tracks", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench_checks_") as tmp:
        workdir = Path(tmp)
        store = RawStore(workdir / "raw")
        t = time.perf_counter()
        tracks = write_corpus(store, n_tracks, n_entries)
        generate_s = time.perf_counter() - t
        print(f"corpus written in {generate_s:.1f}s; running the pass", flush=True)
        production = run_pass(tracks, store, workdir, args.workers, batch_tracks)
        print(f"pass: {production['wall_s']}s wall", flush=True)
        phases = phase_seconds(tracks[:baseline_tracks], store, batch_tracks)
        baseline = run_baseline(tracks[:baseline_tracks], store, workdir)
    per_track = baseline["wall_s"] / baseline["tracks"]
    projected_baseline = per_track * n_tracks / args.workers
    result: dict[str, Any] = {
        "corpus": {"tracks": n_tracks, "entries": n_entries, "languages": list(LANGS), "scale": f"1/{scale}",
                   "encodings": {e: sum(1 for m in tracks if m["encoding"] == e) for e in sorted({m["encoding"] for m in tracks})},
                   "generate_s": round(generate_s, 1)},
        "workers": args.workers,
        "batch_tracks": batch_tracks,
        "pass": production,
        "peak_rss_mib": dict(production["rss_mib_sampled"]["after_parquet"],
                             coordinator_lifetime_ru_maxrss=round(peak_rss_mib(), 1)),
        "phase_seconds_on_baseline_tracks": dict(phases, tracks=baseline_tracks),
        "baseline": dict(baseline, projected_wall_s=round(projected_baseline, 1),
                         projection=f"linear: wall per track on {baseline['tracks']} tracks in one process x "
                                    f"{n_tracks} tracks / {args.workers} workers (perfect speed-up assumed)"),
        "ratio_baseline_over_pass": round(projected_baseline / production["wall_s"], 2),
        "results_match_planted": production["n_mismatches"] == 0,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "polars": pl.__version__,
                    "platform": platform.platform(), "load_avg_1m_at_end": round(os.getloadavg()[0], 2)},
        "recorded_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    result["peak_rss_mib"]["total_upper_bound"] = round(  # every process at its own peak at once
        result["peak_rss_mib"]["coordinator"] + args.workers * result["peak_rss_mib"]["largest_worker"], 1)
    if scale > 1 or args.tracks:
        f = PAPER_TRACKS / n_tracks
        result["projected_full"] = {"note": f"linear projection of this run to {PAPER_TRACKS} tracks "
                                            f"(x{f:.2f}; same workers)",
                                    "wall_s": round(production["wall_s"] * f, 1),
                                    "baseline_wall_s": round(per_track * PAPER_TRACKS / args.workers, 1)}
    if not args.no_write and mode != "custom":
        stored: dict[str, Any] = {}
        if RESULTS_FILE.exists():
            try:
                stored = json.loads(RESULTS_FILE.read_text())
            except ValueError:
                stored = {}
        stored = {k: v for k, v in stored.items() if k in ("quick", "full")}
        stored = {"benchmark": "bench_checks",
                  "description": "the whole per-track pass (decode, strict parse, verification layers incl. "
                                 "language identification, sanitization, state DB writes, release entries Parquet) "
                                 "at paper scale against srt+chardet+langdetect", **stored, mode: result}
        RESULTS_FILE.parent.mkdir(parents=True, exist_ok=True)
        tmpf = RESULTS_FILE.with_suffix(".json.tmp")
        tmpf.write_text(json.dumps(stored, indent=2) + "\n")
        tmpf.replace(RESULTS_FILE)
    b = result["baseline"]
    print(f"{n_tracks} tracks, {n_entries} entries: pass {production['wall_s']}s wall "
          f"({production['entries_per_s']} entries/s; writes {production['coordinator_write_s']}s, "
          f"parquet {production['parquet_s']}s); CPU {production['cpu_s']}; peak RSS {result['peak_rss_mib']}")
    print(f"flags {production['flags_by_layer']} (planted {production['planted_by_layer']}); "
          f"sanitization {production['sanitization']}; phases on {baseline_tracks} tracks {phases}")
    print(f"baseline {b['name']} on {b['tracks']} tracks: {b['wall_s']}s, projected {b['projected_wall_s']}s "
          f"-> ratio {result['ratio_baseline_over_pass']}x")
    if production["n_mismatches"]:
        print(f"MISMATCH: {production['mismatches'][:3]}", file=sys.stderr)
        raise SystemExit(1)
    return result


def run(quick: bool = False) -> dict[str, Any]:
    """Entry point of benchmarks.run (`make bench`)."""
    return main(["--quick"] if quick else [])


if __name__ == "__main__":
    main()
