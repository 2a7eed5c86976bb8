"""Benchmarks: `python -m benchmarks.bench_decode`, `python -m benchmarks.bench_parse`."""
