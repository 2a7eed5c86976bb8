"""`make bench`: run every benchmark; each writes benchmarks/results/<name>.json."""

from __future__ import annotations

import importlib
import sys
import time

BENCHES = ["benchmarks.bench_decode", "benchmarks.bench_parse", "benchmarks.bench_inspect", "benchmarks.bench_checks", "benchmarks.bench_coverage"]
BENCHES.append("benchmarks.bench_alias")
BENCHES.append("benchmarks.bench_targets")  # the speed targets that left tests/ (issue 14)
BENCHES.append("benchmarks.bench_ocr")  # Tesseract accuracy on the sample worlds' gold pages (issue 17)
BENCHES.append("benchmarks.bench_hollywood_scale")  # a generated year of Variety: bytes, memory, rebuild (issue 17)
BENCHES.append("benchmarks.bench_langid")  # language identification candidates on the real tracks (issue 18)
BENCHES.append("benchmarks.bench_rebuild")  # sample build, unchanged and 1 % changed rebuilds (issue 18)


def main(argv: list[str]) -> int:
    for name in BENCHES:
        t0 = time.perf_counter()
        print(f"== {name}", flush=True)
        mod = importlib.import_module(name)
        mod.run(quick="--quick" in argv)
        print(f"== {name} done in {time.perf_counter() - t0:.1f}s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
