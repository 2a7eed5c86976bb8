"""Issue 14 point 1: one poison candidate is a recorded rejection (reason ``internal_error``,
exception type and detail), never a failed stage -- in process_bytes for every layer, for the
real poison zip, and in the worker pool (an exception in a worker, a worker killed hard)."""

from __future__ import annotations

import io
import struct
import zipfile

import pytest

from cinesub.settings import Thresholds
from validators.candidate import INTERNAL_ERROR, process_bytes

SRT = "".join(f"{i}\n00:00:{i:02d},000 --> 00:00:{i:02d},900\nLine number {i} of the test.\n\n"
              for i in range(1, 30)).encode()


def poison_zip() -> bytes:
    """A small zip whose entry name is flagged UTF-8 (general-purpose bit 11) but is not UTF-8:
    zipfile raises UnicodeDecodeError on opening it (issue 14's example)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("subX.srt", SRT.decode())
    data = bytearray(buf.getvalue().replace(b"subX.srt", b"sub\xff.srt"))
    for off in (data.find(b"PK\x03\x04") + 6, data.find(b"PK\x01\x02") + 8):
        (flag,) = struct.unpack_from("<H", data, off)
        struct.pack_into("<H", data, off, flag | 0x800)
    return bytes(data)


def test_poison_zip_is_a_rejection_not_an_exception():
    raw = poison_zip()
    with pytest.raises(ValueError):  # the bytes really are poison for zipfile
        zipfile.ZipFile(io.BytesIO(raw)).namelist()
    for _ in range(2):  # and stay a rejection, the same one, however often they are processed
        out = process_bytes(raw, "en", 1, Thresholds())
        assert out.status == "rejected"
        assert out.reasons and out.flags and all(f.severity == "stop" for f in out.flags)
        assert out.entries is None
        if out.reasons == [INTERNAL_ERROR]:  # the safety net caught it (no archive reason code yet)
            assert out.error_type == "UnicodeDecodeError" and out.error_detail.startswith("decode: ")


class Boom(RuntimeError):
    pass


@pytest.mark.parametrize("module, attr, step", [
    ("extractors.decode", "decode", "decode"),
    ("extractors.srt", "parse_to_arrow", "parse"),
    ("validators.checks", "run_checks_batch", "checks"),  # the batch layers (process_batch)
    ("validators.sanitize", "sanitize_batch", "sanitize"),
    ("validators.candidate", "words_series", "tokens"),
])
def test_exception_in_any_layer_is_an_internal_error_rejection(monkeypatch, module, attr, step):
    import importlib

    clean = process_bytes(SRT, "en", 1, Thresholds())
    assert clean.status != "rejected" and clean.error_type is None

    def boom(*a, **k):
        raise Boom("planted failure\nsecond line " + "x" * 1000)

    monkeypatch.setattr(importlib.import_module(module), attr, boom)
    out = process_bytes(SRT, "en", 1, Thresholds())
    assert out.status == "rejected" and out.reasons == [INTERNAL_ERROR]
    assert out.error_type == "Boom"
    assert out.error_detail.startswith(f"{step}: planted failure") and len(out.error_detail) <= 300
    (flag,) = out.flags
    assert flag.layer == INTERNAL_ERROR and flag.severity == "stop"
    assert flag.evidence == {"step": step, "error_type": "Boom", "detail": out.error_detail}
    assert out.entries is None and out.sanitization is None


def test_worker_pool_isolates_raising_and_dying_workers():
    """An exception in a worker is that job's error outcome; a worker killed hard (the pool
    breaks) loses no finished result, and the job that killed it is identified alone."""
    from _pool_jobs import failed, work

    from flows.worker_pool import run_isolated

    results = list(run_isolated(work, range(12), 2, failed))
    by_job = {r[1] if r[0] != "ok" else r[1] // 2: r for r in results}
    assert len(results) == 12 and sorted(by_job) == list(range(12))
    assert by_job[5][0] == "ValueError" and by_job[5][2] == "job five is poison" and by_job[5][3] == "worker"
    assert by_job[3][0] == "WorkerDied" and by_job[3][3] == "worker"
    assert all(by_job[n] == ("ok", 2 * n) for n in range(12) if n not in (3, 5))


def test_local_runner_keeps_its_pool_across_maps_and_survives_a_dead_worker():
    """The rounds of a build reuse one pool (worker start-up paid once per run); a worker death
    drops that pool, and the next map gets a fresh one that works."""
    from _pool_jobs import failed, pid, work

    from flows.items import LocalItemRunner

    with LocalItemRunner(2) as runner:
        first = dict(runner.map(pid, range(8), failed))
        second = dict(runner.map(pid, range(8), failed))
        assert sorted(first) == sorted(second) == list(range(8))
        assert set(first.values()) & set(second.values())  # the same worker processes answered
        results = list(runner.map(work, range(8), failed))
        assert ("WorkerDied", 3) in [r[:2] for r in results] and ("ValueError", 5) in [r[:2] for r in results]
        third = dict(runner.map(pid, range(4), failed))
        assert sorted(third) == list(range(4))
        assert not set(third.values()) & set(first.values())  # the broken pool was replaced
    assert runner._keeper._pool is None
