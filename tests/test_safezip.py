"""Safe in-memory ZIP extraction (extractors/providers/safezip.py): every refusal has its reason
code, limits are enforced on declared *and* real sizes, and nothing is ever written to disk."""

from __future__ import annotations

import builtins
import io
import os
import struct
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from extractors.providers.errors import REASON_CODES, ProviderError
from extractors.providers.safezip import ZipLimits, extract_srt, pick_srt
from fixtures.faults import make_zip, make_zip_bomb, make_zip_slip

SRT = "1\r\n00:00:01,000 --> 00:00:02,500\r\nHello there.\r\n\r\n2\r\n00:00:03,000 --> 00:00:04,000\r\nBye.\r\n".encode()
ZIP_CODES = {"zip_corrupt", "zip_too_many", "zip_slip", "zip_nested", "zip_bomb", "zip_no_srt"}


def refused(data: bytes, limits: ZipLimits = ZipLimits()) -> ProviderError:
    with pytest.raises(ProviderError) as info:
        extract_srt(data, limits)
    assert info.value.reason_code in ZIP_CODES
    assert info.value.retryable is False
    return info.value


def test_reason_codes_are_documented():
    assert ZIP_CODES <= set(REASON_CODES)


def test_single_srt_comes_back_byte_identical():
    raw = "1\n00:00:01,000 --> 00:00:02,000\nÇa a accéléré\n".encode("cp1252")  # never decoded
    assert extract_srt(make_zip([("Movie.2013.srt", raw)])) == [("Movie.2013.srt", raw)]
    stored = make_zip([("a.SRT", raw)], compression=zipfile.ZIP_STORED)
    assert extract_srt(stored) == [("a.SRT", raw)]


def test_other_members_ignored_and_largest_srt_picked():
    small, big = SRT, SRT * 5
    data = make_zip([("readme.nfo", b"release info"), ("subs/", b""), ("subs/part.srt", small),
                     ("subs/full.srt", big), ("cover.jpg", b"\xff\xd8\xff")])
    members = extract_srt(data)
    assert [n for n, _ in members] == ["subs/part.srt", "subs/full.srt"]
    assert pick_srt(members) == ("subs/full.srt", big)
    assert pick_srt([("b.srt", SRT), ("a.srt", SRT)])[0] == "a.srt"  # ties by name


@pytest.mark.parametrize("name", [
    "../evil.srt", "subs/../../evil.srt", "/etc/evil.srt", "//server/share/evil.srt", "C:/evil.srt",
    "c:evil.srt", "..\\..\\evil.srt", "subs\\..\\..\\evil.srt", "../run.sh",
])
def test_zip_slip_paths(name):
    err = refused(make_zip([("ok.srt", SRT), (name, SRT)]))
    assert err.reason_code == "zip_slip", err


def test_zip_slip_symlink_member():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("ok.srt", SRT)
        link = zipfile.ZipInfo("link.srt")
        link.create_system = 3
        link.external_attr = (0o120777 << 16)
        zf.writestr(link, "/etc/passwd")
    assert refused(buf.getvalue()).reason_code == "zip_slip"


def test_fixture_slip_archive_refused():
    assert refused(make_zip_slip()).reason_code == "zip_slip"


@pytest.mark.parametrize("members", [
    [("ok.srt", SRT), ("inner.zip", make_zip([("x.srt", SRT)]))],
    [("ok.srt", SRT), ("subs.rar", b"Rar!\x1a\x07\x00")],
    [("ok.srt", SRT), ("subs.part1.r00", b"x")],
    [("disguised.srt", make_zip([("x.srt", SRT)]))],  # an archive by content
    [("gz.srt", b"\x1f\x8b\x08\x00" + b"\0" * 20)],
])
def test_nested_archives_refused(members):
    assert refused(make_zip(members)).reason_code == "zip_nested"


def test_zip_bomb_by_declared_size():
    err = refused(make_zip_bomb(16))
    assert err.reason_code == "zip_bomb" and "declares" in err.detail


def test_zip_bomb_by_ratio_below_size_limits():
    data = make_zip([("movie.srt", b"\0" * (2 * 1024 * 1024))])  # 2 MiB of zeros: ratio ~1000
    assert len(data) < 10_000
    err = refused(data)
    assert err.reason_code == "zip_bomb" and "ratio" in err.detail


def test_zip_bomb_total_and_archive_size():
    limits = ZipLimits(max_member_bytes=1000, max_total_bytes=1500, max_archive_bytes=10_000)
    assert refused(make_zip([("a.srt", SRT * 6), ("b.srt", SRT * 6), ("c.srt", SRT * 6)]), limits).reason_code == "zip_bomb"
    assert refused(make_zip([("a.srt", SRT * 20)]), limits).reason_code == "zip_bomb"  # member > 1000
    big = make_zip([("a.srt", os.urandom(20_000))], compression=zipfile.ZIP_STORED)
    assert refused(big, limits).reason_code == "zip_bomb"  # archive > 10 kB


def _patch_sizes(data: bytes, new_size: int) -> bytes:
    """Rewrite the uncompressed size of the (only) member in both local and central headers."""
    out = bytearray(data)
    local = out.find(b"PK\x03\x04")
    struct.pack_into("<I", out, local + 22, new_size)
    central = out.find(b"PK\x01\x02")
    struct.pack_into("<I", out, central + 24, new_size)
    return bytes(out)


def test_lying_header_small_declared_size_is_caught():
    # declares 100 bytes, inflates to 3 MiB: the read stops at the declared size and the CRC fails
    data = _patch_sizes(make_zip([("movie.srt", b"A" * (3 * 1024 * 1024))]), 100)
    assert refused(data).reason_code in ("zip_corrupt", "zip_bomb")


def test_lying_header_large_declared_size_is_caught():
    data = _patch_sizes(make_zip([("movie.srt", SRT)]), len(SRT) + 50)
    assert refused(data).reason_code == "zip_corrupt"


def test_too_many_members():
    members = [(f"{i:03d}.srt", SRT) for i in range(40)]
    err = refused(make_zip(members))
    assert err.reason_code == "zip_too_many" and "40" in err.detail
    assert len(extract_srt(make_zip(members[:32]))) == 32


def test_no_srt():
    assert refused(make_zip([("readme.txt", b"hi"), ("movie.sub", b"{1}{2}x")])).reason_code == "zip_no_srt"
    assert refused(make_zip([])).reason_code == "zip_no_srt"


@pytest.mark.parametrize("data", [b"", b"not a zip at all", b"PK\x03\x04garbage", os.urandom(300)])
def test_corrupt_archives(data):
    assert refused(data).reason_code == "zip_corrupt"


def test_truncated_archive_and_crc_mismatch():
    good = make_zip([("movie.srt", SRT * 10)], compression=zipfile.ZIP_STORED)
    assert refused(good[: len(good) // 2]).reason_code == "zip_corrupt"
    bad = bytearray(good)
    at = bad.find(b"Hello")
    bad[at] ^= 0x20  # flip a bit inside the stored data: CRC mismatch
    assert refused(bytes(bad)).reason_code == "zip_corrupt"


def test_encrypted_member_refused():
    data = bytearray(make_zip([("movie.srt", SRT)]))
    local, central = data.find(b"PK\x03\x04"), data.find(b"PK\x01\x02")
    data[local + 6] |= 0x1  # general purpose flag bit 0: encrypted
    data[central + 8] |= 0x1
    err = refused(bytes(data))
    assert err.reason_code == "zip_corrupt" and "encrypted" in err.detail


def test_nothing_is_written_anywhere(tmp_path, monkeypatch):
    """Extraction of slip/bomb/good archives opens no file for writing and creates nothing."""
    workdir = tmp_path / "work" / "dir"
    workdir.mkdir(parents=True)
    monkeypatch.chdir(workdir)
    writes: list[str] = []
    real_open, real_os_open = builtins.open, os.open

    def guarded_open(file, mode="r", *args, **kwargs):
        if any(c in mode for c in "wax+"):
            writes.append(str(file))
        return real_open(file, mode, *args, **kwargs)

    def guarded_os_open(path, flags, *args, **kwargs):
        if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
            writes.append(str(path))
        return real_os_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", guarded_open)
    monkeypatch.setattr(os, "open", guarded_os_open)
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    for data in (make_zip_slip(), make_zip_bomb(16), make_zip([("../../x.srt", SRT)]),
                 make_zip([("ok.srt", SRT)])):
        try:
            extract_srt(data)
        except ProviderError:
            pass
    assert writes == []
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before
    assert not (tmp_path / "cinesub-zip-slip-evil.srt").exists()
    assert not (tmp_path / "work" / "cinesub-zip-slip-evil.srt").exists()
    assert not Path("/tmp/cinesub-zip-slip-abs.srt").exists()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=2048))
def test_arbitrary_bytes_never_escape_as_other_errors(data):
    try:
        out = extract_srt(data)
    except ProviderError as exc:
        assert exc.reason_code in ZIP_CODES
    else:
        assert all(isinstance(b, bytes) for _, b in out)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(min_value=0, max_value=10_000), st.integers(min_value=0, max_value=255)),
                min_size=1, max_size=8))
def test_mutated_archives_never_escape_as_other_errors(flips):
    data = bytearray(make_zip([("a.srt", SRT * 3), ("b.nfo", b"info")]))
    for pos, value in flips:
        data[pos % len(data)] = value
    try:
        extract_srt(bytes(data))
    except ProviderError as exc:
        assert exc.reason_code in ZIP_CODES
