"""SRT parse throughput (issue 3): our strict parser vs ``srt``, ``pysrt`` and ``pysubs2`` on the
same texts — every real file of ``../shared/realdata/srt`` (all together), a generated 400k-entry
file and a generated 1M-entry file (real cues repeated with fresh indices, CRLF).

    python -m benchmarks.bench_parse [--quick]

Columns: entries/s of each parser (``srt``: the generator consumed fully; ``pysrt.from_string``;
``pysubs2.SSAFile.from_string(format_="srt")``; ours: ``parse_to_arrow`` on the decoded text) and
the ratio to ours. Column "decode+parse vs srt" times our decode (with its verification) and
strict parse on the raw bytes (:func:`validators.inspect_report.inspect_track`) against ``srt.parse``
alone on the already-decoded text. The issue's ≥ 3× criterion -- the whole ``cinesub inspect``
core, verification layers included -- is measured by :mod:`benchmarks.bench_inspect`. Entry
counts are checked: a parser that returns a different count is reported (pysrt/pysubs2 silently
drop or merge cues).

Writes ``benchmarks/results/bench_parse.json``.
"""

from __future__ import annotations

import gc
import time
from typing import Callable

import pysrt
import pysubs2
import srt as srt_lib

from benchmarks.common import print_table, publish_results, quick_main, real_texts, realdata_dir
from extractors import srt
from extractors.decode import decode
from validators.inspect_report import inspect_track


def _time(fn: Callable[[], int], repeat: int) -> tuple[float, int]:
    best, n = float("inf"), -1
    for _ in range(repeat):
        gc.collect()
        t = time.perf_counter()
        n = fn()
        best = min(best, time.perf_counter() - t)
    return best, n


def ours(text: str) -> int:
    table, _, errors, status = srt.parse_to_arrow(text)
    assert status == "ok", errors
    return table.num_rows


def srt_parse(text: str) -> int:
    return sum(1 for _ in srt_lib.parse(text))


def pysrt_parse(text: str) -> int:
    return len(pysrt.from_string(text))


def pysubs2_parse(text: str) -> int:
    return len(pysubs2.SSAFile.from_string(text, format_="srt"))


PARSERS = {"cinesub": ours, "srt": srt_parse, "pysrt": pysrt_parse, "pysubs2": pysubs2_parse}


def generated(n: int) -> bytes:
    """n real cues (Arabic, Persian, English, Vietnamese dialogue, tags kept), indices 1..n, CRLF."""
    pool = []
    for lang, _, text in real_texts(realdata_dir()):
        if lang in ("ar", "fa", "en", "vi"):
            pool.extend(srt.parse(text).entries[:400])
    parts = []
    for i in range(n):
        e = pool[i % len(pool)]
        body = e.content.replace("\n", "\r\n")
        parts.append(f"{i + 1}\r\n{e.timeframe}\r\n{body}\r\n" if body else f"{i + 1}\r\n{e.timeframe}\r\n")
    return "\r\n".join(parts).encode("utf-8")


def run(quick: bool = False) -> dict:
    texts = [t for _, _, t in real_texts(realdata_dir())]
    rows_out = []
    sizes = [(f"generated {n // 1000}k", n) for n in ((50_000,) if quick else (400_000, 1_000_000))]
    results: dict[str, dict] = {}

    # real files: sum over files
    per = {}
    total_entries = sum(ours(t) for t in texts)
    for name, fn in PARSERS.items():
        t_sum, n_sum = 0.0, 0
        for t in texts:
            sec, n = _time(lambda: fn(t), 3)
            t_sum += sec
            n_sum += n
        per[name] = {"seconds": round(t_sum, 4), "entries": n_sum, "entries_per_s": round(n_sum / t_sum)}
    results["realdata (29 files)"] = {"entries": total_entries, "parsers": per}

    for label, n in sizes:
        raw = generated(n)
        text = raw.decode("utf-8")
        per = {}
        for name, fn in PARSERS.items():
            repeat = 2 if name in ("cinesub", "srt") else 1
            sec, got = _time(lambda: fn(text), repeat)
            per[name] = {"seconds": round(sec, 3), "entries": got, "entries_per_s": round(got / sec)}
        inspect_sec, got = _time(lambda: inspect_track(raw, "ar").table.num_rows, 2)
        per["cinesub decode+parse (bytes)"] = {"seconds": round(inspect_sec, 3), "entries": got,
                                          "entries_per_s": round(got / inspect_sec)}
        decode_sec, _ = _time(lambda: len(decode(raw, "ar").text), 2)
        per["cinesub decode only"] = {"seconds": round(decode_sec, 3), "entries": n, "entries_per_s": round(n / decode_sec)}
        results[label] = {"entries": n, "bytes": len(raw), "parsers": per}
        del raw, text
        gc.collect()

    headers = ["file", "entries", "cinesub e/s", "srt e/s", "pysrt e/s", "pysubs2 e/s",
               "srt/ours", "pysrt/ours", "pysubs2/ours", "decode+parse vs srt"]
    for label, r in results.items():
        p = r["parsers"]
        ours_s = p["cinesub"]["seconds"]
        ratio = {k: p[k]["seconds"] / ours_s for k in ("srt", "pysrt", "pysubs2")}
        inspect = p.get("cinesub decode+parse (bytes)")
        r["ratios"] = {f"{k}_over_ours": round(v, 2) for k, v in ratio.items()}
        if inspect:
            r["ratios"]["srt_over_ours_decode_parse_from_bytes"] = round(p["srt"]["seconds"] / inspect["seconds"], 2)
        counts = {k: v["entries"] for k, v in p.items() if k in PARSERS}
        r["entry_count_mismatch"] = {k: v for k, v in counts.items() if v != counts["cinesub"]}
        rows_out.append([
            label, r["entries"], f"{p['cinesub']['entries_per_s']:,}", f"{p['srt']['entries_per_s']:,}",
            f"{p['pysrt']['entries_per_s']:,}", f"{p['pysubs2']['entries_per_s']:,}",
            f"{ratio['srt']:.1f}x", f"{ratio['pysrt']:.1f}x", f"{ratio['pysubs2']:.1f}x",
            f"{p['srt']['seconds'] / inspect['seconds']:.1f}x" if inspect else "-",
        ])
    print("\nSRT parse throughput (best of runs; ratios > 1 mean ours is faster)\n")
    print_table(headers, rows_out)
    for label, r in results.items():
        if r["entry_count_mismatch"]:
            print(f"  {label}: entry counts differ from ours: {r['entry_count_mismatch']}")
    publish_results("bench_parse", {"quick": quick, "results": results})
    return results


if __name__ == "__main__":
    quick_main(__doc__, run, "a 50k-entry generated file instead of 400k and 1M")
