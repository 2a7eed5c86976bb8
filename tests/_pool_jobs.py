"""Work functions for tests/test_poison_items.py, importable by spawn workers."""

from __future__ import annotations

import os


def work(n: int) -> tuple[str, int]:
    """Job ``n``: 3 kills its worker hard, 5 raises, every other job doubles its number."""
    if n == 3:
        os._exit(9)
    if n == 5:
        raise ValueError("job five is poison")
    return "ok", n * 2


def failed(n: int, error_type: str, message: str, step: str) -> tuple[str, int, str, str]:
    return error_type, n, message, step


def pid(n: int) -> tuple[int, int]:
    """Job ``n`` answered with the worker's process id."""
    return n, os.getpid()


def nap(n: int) -> int:
    """A job that outlives any test: only the death of its worker ends it early."""
    import time

    time.sleep(600)
    return n


POOL_SCRIPT = """
import sys
sys.path[:0] = [{repo!r}, {tests!r}]
from _pool_jobs import failed, nap
from flows.worker_pool import run_isolated
for _ in run_isolated(nap, range(4), 2, failed):
    pass
"""
