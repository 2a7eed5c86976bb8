"""cinesub/tmpfiles.py write_text_atomic and cinesub/digests.py files_digest: the helpers of the
build's content-addressed caches (coverage answers, safety scans, statistics figures)."""

from __future__ import annotations

import os

import pytest

from cinesub.digests import files_digest
from cinesub.tmpfiles import write_text_atomic


def test_write_text_atomic_writes_whole_files_and_leaves_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "a" / "b.json"
    write_text_atomic(target, "first")
    write_text_atomic(target, "second ✓")
    assert target.read_text(encoding="utf-8") == "second ✓" and oct(target.stat().st_mode & 0o777) == "0o644"

    def boom(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        write_text_atomic(target, "third")
    assert target.read_text(encoding="utf-8") == "second ✓"
    assert sorted(p.name for p in target.parent.iterdir()) == ["b.json"]


def test_files_digest_follows_bytes_order_and_extras(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_bytes(b"x")
    b.write_bytes(b"y")
    d = files_digest([a, b])
    assert d == files_digest([a, b]) != files_digest([b, a])
    assert files_digest([a, b], "3.9") != d
    b.write_bytes(b"z")
    assert files_digest([a, b]) != d
