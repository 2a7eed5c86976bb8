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


def _digest_as_before(root, subdirs=None):
    """tree_digest as it was written over pathlib (sorted rglob, Path.relative_to, Path.is_dir)."""
    import stat as st_mod
    from pathlib import Path

    root = Path(root)
    h = hashlib.sha256()
    paths = sorted(root.rglob("*")) if subdirs is None else \
        sorted(p for d in subdirs if (root / d).is_dir() for p in (root / d).rglob("*"))
    for p in paths:
        name = os.fsencode(p.relative_to(root))
        try:
            if not st_mod.S_ISREG(os.stat(p).st_mode):
                if not p.is_dir():
                    h.update(name + b"\0special\0")
                continue
            with open(p, "rb") as f:
                h.update(name + b"\0")
                h.update(hashlib.file_digest(f, "sha256").digest())
        except OSError as exc:
            h.update(name + b"\0" + type(exc).__name__.encode() + b"\0")
    return h.hexdigest()


def test_the_digest_is_the_one_the_pathlib_walk_gave(tmp_path):
    """Same bytes as before the walk used plain strings: hidden files, names that sort
    differently as strings and as path parts (``a-b`` vs ``a/b``), a non-UTF-8 name, a FIFO, a
    dangling link, a link to a folder (listed, not entered), nested and empty folders."""
    root = _tree(tmp_path / "w")
    (root / "a-b").write_text("x")
    (root / "a" / "b").mkdir()
    (root / "a" / "b" / "c.txt").write_text("deep")
    (root / ".hidden").write_text("h")
    (root / "empty").mkdir()
    (root / os.fsdecode(b"caf\xe9.srt")).write_bytes(b"latin-1 name")
    os.mkfifo(root / "pipe")
    os.symlink(root / "nowhere", root / "dangling")
    os.symlink(root / "a", root / "link-to-a")
    assert tree_digest(root) == _digest_as_before(root)
    assert tree_digest(root, ["a", "a/b", "missing", "link-to-a"]) == \
        _digest_as_before(root, ["a", "a/b", "missing", "link-to-a"])
    with one_snapshot():
        assert tree_digest(root) == _digest_as_before(root)
