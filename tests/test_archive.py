"""The one archive reader (extractors/archive.py), through both of its users: the decoder
(extractors.decode, gzip/zip bodies in the raw store) and the provider ZIP path
(extractors.providers.safezip). Caps hold while streaming for every compression method, gzip is
read to its last member, and no zipfile exception escapes."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _archive_bombs import (BZIP2, DEFLATED, LZMA, STORED, MiB, bzip2_bomb, deflate_bomb, gzip_members_bomb,
                            lying_zip, lzma_member_data, member, zip_archive)
from extractors import archive
from extractors import decode as decode_mod
from extractors import srt
from extractors.decode import decode
from extractors.providers.errors import ProviderError
from extractors.providers.safezip import ZipLimits, extract_srt

REPO = Path(__file__).resolve().parent.parent
EN = "1\r\n00:00:01,000 --> 00:00:03,000\r\nWhere are you going, señor?\r\n\r\n2\r\n00:00:04,000 --> 00:00:06,000\r\nIt costs €5, he said.\r\n"
METHODS = {"stored": STORED, "deflate": DEFLATED, "bzip2": BZIP2, "lzma": LZMA}


def _peak(f) -> tuple[object, int]:
    """(result or raised exception, peak traced allocation in bytes) of ``f()``."""
    tracemalloc.start()
    try:
        try:
            res: object = f()
        except Exception as exc:  # noqa: BLE001 - the caller inspects it
            res = exc
        return res, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


# --------------------------------------------------------------------------------------------
# every method reads back exactly, in both users
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("method", METHODS)
def test_every_method_round_trips_in_both_users(method):
    raw = EN.encode("cp1252") * 20
    data = zip_archive([member("readme.nfo", b"info", METHODS[method]), member("movie.srt", raw, METHODS[method])])
    assert extract_srt(data) == [("movie.srt", raw)]
    d = decode(data, "en")
    assert d.status == "ok" and d.text == raw.decode("cp1252") and d.reasons == ["compressed_unpacked"]
    assert d.decoder == "zip:movie.srt>candidate:cp1252"


def test_unsupported_method_is_a_clean_refusal():
    data = zip_archive([{**member("movie.srt", EN.encode(), STORED), "method": 9}])  # deflate64
    with pytest.raises(ProviderError) as info:
        extract_srt(data)
    assert info.value.reason_code == "zip_corrupt" and "method 9" in info.value.detail
    d = decode(data, "en")
    assert d.status == "rejected" and d.reasons == ["compressed_rejected"] and "zip_corrupt" in d.flags[0].detail


# --------------------------------------------------------------------------------------------
# caps while streaming: a lying header cannot make any method expand in memory
# --------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def lying_bombs() -> dict[str, bytes]:
    """One-member ZIPs declaring 1,000 bytes whose member really expands to 128 MiB (LZMA: 96 MiB;
    built fast: repeated bzip2 blocks / flushed deflate segments)."""
    return {
        "deflate": lying_zip(deflate_bomb(128 * MiB, block=8 * MiB), DEFLATED),
        "bzip2": lying_zip(bzip2_bomb(128 * MiB, block=8 * MiB), BZIP2),
        "lzma": lying_zip(lzma_member_data(b"\0" * (96 * MiB)), LZMA),
    }


@pytest.mark.parametrize("method", ["deflate", "bzip2", "lzma"])
def test_lying_member_refused_without_expanding(lying_bombs, method):
    data = lying_bombs[method]
    assert len(data) < 200_000
    err, peak = _peak(lambda: extract_srt(data))
    assert isinstance(err, ProviderError) and err.reason_code == "zip_corrupt", err
    assert "expands beyond 1000 bytes" in err.detail
    assert peak < 4 * MiB, f"{method}: {peak / MiB:.0f} MiB allocated while refusing"
    d, peak = _peak(lambda: decode(data, "en"))
    assert d.status == "rejected" and d.reasons == ["compressed_rejected"], d
    assert peak < 4 * MiB, f"{method}: {peak / MiB:.0f} MiB allocated while decoding"


@pytest.mark.parametrize("method", ["deflate", "bzip2", "lzma"])
def test_honest_bomb_below_the_size_limit_refused_by_ratio(method):
    data = zip_archive([member("movie.srt", b"\0" * (2 * MiB), METHODS[method])])
    with pytest.raises(ProviderError) as info:
        extract_srt(data)
    assert info.value.reason_code == "zip_bomb" and "ratio" in info.value.detail


@pytest.mark.parametrize("method", ["deflate", "bzip2", "lzma"])
def test_real_size_cap_holds_while_streaming(method):
    """A member declaring its true size, above the member cap: refused from the declaration; and
    with the declaration checks bypassed (declared = cap), the stream stops at cap + 1 bytes."""
    limits = ZipLimits(max_member_bytes=100_000, ratio_floor_bytes=10**12)
    payload = bytes(range(256)) * 2000  # 512,000 bytes, compresses poorly: no ratio refusal
    with pytest.raises(ProviderError) as info:
        extract_srt(zip_archive([member("movie.srt", payload, METHODS[method])]), limits)
    assert info.value.reason_code == "zip_bomb" and "declares" in info.value.detail
    lying = zip_archive([member("movie.srt", payload, METHODS[method], size=100_000)])
    err, peak = _peak(lambda: extract_srt(lying, limits))
    assert isinstance(err, ProviderError) and err.reason_code == "zip_corrupt" and "beyond 100000" in err.detail
    assert peak < 2 * MiB


# --------------------------------------------------------------------------------------------
# gzip: every member, same caps
# --------------------------------------------------------------------------------------------
def test_multi_member_gzip_read_to_the_end():
    first, second = EN + "\r\n", EN.replace("1\r\n", "3\r\n", 1).replace("2\r\n00:00:04", "4\r\n00:00:04")
    raw = gzip.compress(first.encode("cp1252"), mtime=0) + gzip.compress(second.encode("cp1252"), mtime=0)
    d = decode(raw, "en")
    assert d.status == "ok" and d.text == first + second
    assert [e.index for e in srt.parse(d.text).entries] == [1, 2, 3, 4]


@pytest.mark.realdata
def test_real_file_split_into_gzip_members_keeps_every_cue(realdata_dir):
    raw = (realdata_dir / "srt" / "en" / "en__the_incredible_hulk_2008__cp1252_lf_yify.srt").read_bytes()
    cut = raw.index(b"\n\n800\n") + 2  # the first member ends after cue 799 of 832
    packed = gzip.compress(raw[:cut], mtime=0) + gzip.compress(raw[cut:], mtime=0)
    d = decode(packed, "en")
    assert d.status == "ok" and d.text == raw.decode("cp1252")
    assert len(srt.parse(d.text).entries) == 832


def test_gzip_members_bomb_capped_on_the_total(monkeypatch):
    monkeypatch.setattr(decode_mod, "MAX_UNPACKED_BYTES", 1 * MiB)
    raw = gzip_members_bomb(16 * MiB, block=1 * MiB)  # 16 members of 1 MiB each: each one fits
    d, peak = _peak(lambda: decode(raw, "en"))
    assert d.status == "rejected" and d.reasons == ["compressed_rejected"]
    assert "beyond 1048576" in d.flags[0].detail and "gzip_bomb" in d.flags[0].detail
    assert peak < 4 * MiB


def test_gzip_trailing_garbage_refused_and_zero_padding_tolerated():
    packed = gzip.compress(EN.encode("cp1252"), mtime=0)
    d = decode(packed + b"\x00" * 512, "en")
    assert d.status == "ok" and d.text == EN
    d = decode(packed + b"not gzip at all", "en")
    assert d.status == "rejected" and "gzip_corrupt" in d.flags[0].detail


# --------------------------------------------------------------------------------------------
# zipfile's exceptions of every kind are clean refusals
# --------------------------------------------------------------------------------------------
def test_name_flagged_utf8_but_not_is_zip_corrupt():
    data = zip_archive([{"name": b"\xff\xfe\x80 subtitle.srt", "data": EN.encode(), "flags": 0x800,
                         "crc": 0, "size": len(EN.encode())}])
    assert len(data) < 400
    d = decode(data, "en")  # raised UnicodeDecodeError out of decode() before
    assert d.status == "rejected" and d.reasons == ["compressed_rejected"]
    assert "zip_corrupt" in d.flags[0].detail and "UnicodeDecodeError" in d.flags[0].detail
    with pytest.raises(ProviderError) as info:
        extract_srt(data)
    assert info.value.reason_code == "zip_corrupt"


def _valid_zips() -> list[bytes]:
    raw = EN.encode("cp1252") * 4
    return [zip_archive([member("a.nfo", b"x", m), member("movie.srt", raw, m)]) for m in METHODS.values()]


_ZIPS = _valid_zips()


@settings(max_examples=250, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(range(len(_ZIPS))),
       st.lists(st.tuples(st.integers(min_value=0, max_value=2000), st.integers(min_value=0, max_value=255)),
                min_size=1, max_size=6))
def test_mutated_archives_never_raise_out_of_decode(which, flips):
    data = bytearray(_ZIPS[which])
    for pos, value in flips:
        data[pos % len(data)] = value
    d = decode(bytes(data), "en")
    assert d.status in ("ok", "flagged", "rejected")
    try:
        extract_srt(bytes(data))
    except ProviderError as exc:
        assert exc.reason_code.startswith("zip_")


@pytest.mark.parametrize("data,code", [
    (zip_archive([member("movie.srt", zip_archive([member("x.srt", EN.encode())]))]), "zip_nested"),
    (zip_archive([member("movie.srt", gzip.compress(EN.encode()))]), "zip_nested"),
    (gzip.compress(gzip.compress(EN.encode())), "gzip_nested"),
    (gzip.compress(zip_archive([member("x.srt", EN.encode())])), "gzip_nested"),
], ids=["zip-in-zip", "gzip-in-zip", "gzip-in-gzip", "zip-in-gzip"])
def test_nested_archives_refused(data, code):
    d = decode(data, "en")
    assert d.status == "rejected" and d.reasons == ["compressed_rejected"] and code in d.flags[0].detail


def test_reason_codes_documented():
    assert set(archive.KINDS) == {"corrupt", "too_many", "slip", "nested", "bomb", "no_srt", "unsupported"}
    for kind in archive.KINDS:
        assert f"``{kind}``" in archive.__doc__


# --------------------------------------------------------------------------------------------
# peak RSS of `cinesub inspect` on archive bombs (a memory bound, not a timing one)
# --------------------------------------------------------------------------------------------
#: Runs `cinesub inspect` from a fresh, small interpreter and reports its peak RSS. Linux counts the
#: RSS a child inherits at fork in its ru_maxrss, so the child must not be forked from the (large,
#: long-lived) pytest worker itself.
_LAUNCHER = r"""
import json, os, subprocess, sys
proc = subprocess.Popen([sys.executable, "-m", "cinesub.cli", "inspect", sys.argv[1], "--language", "en", "--json"],
                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
out = proc.stdout.read().decode("utf-8", "replace")
proc.stdout.close()
_, status, usage = os.wait4(proc.pid, 0)
print(json.dumps({"rc": os.waitstatus_to_exitcode(status), "maxrss_kib": usage.ru_maxrss, "out": out}))
"""


def _inspect_max_rss(path: Path) -> tuple[int, float, str]:
    """(exit code, the child's peak RSS in MiB, stdout) of `cinesub inspect PATH --language en`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CINESUB_")}
    res = subprocess.run([sys.executable, "-c", _LAUNCHER, str(path)], cwd=REPO, env=env,
                         capture_output=True, text=True, check=True)
    r = json.loads(res.stdout)
    return r["rc"], r["maxrss_kib"] / 1024, r["out"]  # ru_maxrss: KiB on Linux


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ru_maxrss in KiB is Linux's unit")
def test_inspect_peak_rss_on_archive_bombs(tmp_path):
    gib = 1024 * MiB
    inner = gzip_members_bomb(64 * MiB, block=16 * MiB)
    bombs = {
        "deflate-1GiB-declares-1000": lying_zip(deflate_bomb(gib), DEFLATED),
        "bzip2-1GiB-declares-1000": lying_zip(bzip2_bomb(gib), BZIP2),
        "lzma-160MiB-declares-1000": lying_zip(lzma_member_data(b"\0" * (160 * MiB)), LZMA),
        "gzip-64-members-1GiB": gzip_members_bomb(gib),
        "nested-gzip-bomb-in-zip": zip_archive([member("movie.srt", inner, STORED)]),
    }
    over = {}
    for name, data in bombs.items():
        path = tmp_path / f"{name}.srt"
        path.write_bytes(data)
        rc, rss, out = _inspect_max_rss(path)
        assert rc == 1, (name, rc, out[-1000:])  # rejected, no traceback
        report = json.loads(out)
        assert report["status"] == "rejected" and "compressed_rejected" in json.dumps(report), name
        if rss >= 512:
            over[name] = round(rss)
    assert not over, f"peak RSS of cinesub inspect >= 512 MiB: {over}"
