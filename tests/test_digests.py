"""cinesub/digests.py: tree digests, and the one-snapshot scope in which each file is hashed once."""

from __future__ import annotations

import hashlib
import os

from cinesub import digests
from cinesub.digests import one_snapshot, tree_digest


def _tree(root):
    (root / "a").mkdir(parents=True)
    (root / "a" / "x.srt").write_bytes(b"1\n00:00:01,000 --> 00:00:02,000\nhello\n")
    (root / "b.json").write_text('{"k": 1}', encoding="utf-8")
    return root


def _counting(monkeypatch):
    calls = []
    real = hashlib.file_digest

    def counted(f, name):
        calls.append(f.name)
        return real(f, name)

    monkeypatch.setattr(digests.hashlib, "file_digest", counted)
    return calls


def test_a_snapshot_hashes_each_file_once_and_gives_the_same_digest(tmp_path, monkeypatch):
    root = _tree(tmp_path / "w")
    plain = tree_digest(root)
    calls = _counting(monkeypatch)
    with one_snapshot():
        assert tree_digest(root) == plain
        assert tree_digest(root) == plain
        assert tree_digest(root, ["a"]) == tree_digest(root, ["a"])
    assert len(calls) == 2  # two files, each read once in the scope
    tree_digest(root)
    assert len(calls) == 4  # outside the scope nothing is remembered


def test_a_file_changed_in_the_scope_is_hashed_again(tmp_path):
    root = _tree(tmp_path / "w")
    with one_snapshot():
        before = tree_digest(root)
        f = root / "a" / "x.srt"
        st = f.stat()
        f.write_bytes(b"1\n00:00:01,000 --> 00:00:02,000\nhellO\n")  # same size
        os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns + 1))  # a new mtime even on a coarse clock
        assert tree_digest(root) != before
        (root / "b.json").write_text('{"k": 22}', encoding="utf-8")  # another size
        after = tree_digest(root)
    assert after == tree_digest(root)


def test_scopes_nest(tmp_path):
    root = _tree(tmp_path / "w")
    with one_snapshot():
        d = tree_digest(root)
        with one_snapshot():
            assert tree_digest(root) == d
        assert digests._MEMO is not None
    assert digests._MEMO is None
