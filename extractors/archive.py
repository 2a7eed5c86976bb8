"""One reader for compressed subtitle payloads: gzip (every member) and ZIP (stored, deflate,
bzip2, LZMA), in memory, capped while streaming.

Both users share it: the decoder (:func:`extractors.decode.decode` unpacks a gzip/zip body found
in the raw store, one level deep) and the provider ZIP path
(:func:`extractors.providers.safezip.extract_srt`, SubDL's archives). Nothing is written to disk.

Caps (:class:`Limits`) are enforced on the declared sizes first and then on the real bytes *while
decompressing*: compressed input is fed in chunks of :data:`CHUNK` bytes and every decompressor
call is asked for at most ``min(CHUNK, cap + 1 - produced)`` bytes, so no call ever returns more
than the limit + 1 byte, whatever the method and whatever the headers claim (a 901-byte bzip2
member declaring 1,000 bytes is refused after 1,001 bytes, not after 1 GiB). A member longer
than its declared size stops there. Multi-member gzip is read to its last member (its members are
one text), under the same caps; bytes after the last member other than zero padding are refused.

Every refusal is an :class:`ArchiveError` with a format (``zip``, ``gzip``, or the name of an
archive format that is not unpacked) and a kind; ``reason_code`` is ``<format>_<kind>``:

===============  ==========================================================================
``corrupt``      not readable (bad header, CRC or size mismatch, truncated stream, bytes after
                 the last gzip member, an encrypted member, an unsupported compression method,
                 and any exception raised while reading it: bad UTF-8 names, ``struct.error``,
                 ``EOFError``, ``zlib``/``bz2``/``lzma`` errors, ...)
``too_many``     more than ``max_members`` ZIP entries or gzip members
``slip``         a ZIP member name that could escape a directory (absolute, drive letter,
                 ``..``, NUL byte) or a symlink entry; checked for every member
``nested``       an archive inside the archive (by name, or a payload starting with an
                 archive's magic number)
``bomb``         the archive, a member or the total above the size limits, or a compression
                 ratio above ``max_ratio`` (members of at least ``ratio_floor_bytes``)
``no_srt``       a ZIP without any ``.srt`` member
``unsupported``  a format that is recognised but not unpacked (rar, 7z, xz, bzip2, zstd, cab)
===============  ==========================================================================
"""

from __future__ import annotations

import bz2
import io
import lzma
import re
import stat
import struct
import zipfile
import zlib
from dataclasses import dataclass, field
from typing import Protocol

__all__ = ["ArchiveError", "Limits", "ZipArchive", "open_zip", "read_zip", "gunzip", "unpack_one",
           "ARCHIVE_EXTS", "ARCHIVE_MAGIC", "CHUNK", "KINDS"]

#: bytes of compressed input per decompressor call, and the most output one call may return
CHUNK = 64 * 1024

KINDS: dict[str, str] = {
    "corrupt": "not a readable archive (bad header, CRC or size mismatch, truncated, encrypted, unsupported method)",
    "too_many": "more members than allowed",
    "slip": "a member path that could escape a directory, or a symlink entry",
    "nested": "an archive inside the archive",
    "bomb": "a size limit or the compression-ratio limit exceeded",
    "no_srt": "no .srt member",
    "unsupported": "an archive format that is not unpacked",
}

ARCHIVE_EXTS = (".zip", ".rar", ".7z", ".gz", ".tgz", ".tar", ".bz2", ".tbz", ".xz", ".txz", ".zst",
                ".lzma", ".cab", ".jar", ".arj", ".lzh", ".z", ".001")
ARCHIVE_MAGIC = (b"PK\x03\x04", b"PK\x05\x06", b"PK\x07\x08", b"Rar!\x1a\x07", b"7z\xbc\xaf\x27\x1c",
                 b"\x1f\x8b", b"BZh", b"\xfd7zXZ\x00", b"\x28\xb5\x2f\xfd", b"MSCF")
_NOT_UNPACKED = ((b"Rar!\x1a\x07", "rar"), (b"7z\xbc\xaf\x27\x1c", "7z"), (b"\xfd7zXZ\x00", "xz"),
                 (b"\x28\xb5\x2f\xfd", "zstd"), (b"MSCF\x00\x00\x00\x00", "cab"))


@dataclass(frozen=True)
class Limits:
    max_archive_bytes: int = 20 * 1024 * 1024
    max_members: int = 32
    max_member_bytes: int = 10 * 1024 * 1024
    max_total_bytes: int = 40 * 1024 * 1024
    #: uncompressed / compressed; SRT text compresses 3-8x, a bomb hundreds to millions
    max_ratio: float = 100.0
    #: members smaller than this are not ratio-checked (tiny repetitive files compress a lot)
    ratio_floor_bytes: int = 256 * 1024
    srt_exts: tuple[str, ...] = (".srt",)


class ArchiveError(Exception):
    """A refused archive: ``fmt`` (zip, gzip, rar, ...), ``kind`` (see :data:`KINDS`), ``detail``."""

    def __init__(self, fmt: str, kind: str, detail: str):
        super().__init__(f"{fmt}_{kind}: {detail}")
        self.fmt, self.kind, self.detail = fmt, kind, detail

    @property
    def reason_code(self) -> str:
        return f"{self.fmt}_{self.kind}"


# --------------------------------------------------------------------------------------------
# streaming decompression with caps
# --------------------------------------------------------------------------------------------
class _Decompressor(Protocol):
    eof: bool
    unused: bytes

    def step(self, data: bytes, max_length: int) -> tuple[bytes, bool]: ...


class _Zlib:
    """zlib/deflate/gzip member; ``step`` returns (output, needs more input)."""

    def __init__(self, wbits: int):
        self._d = zlib.decompressobj(wbits)
        self._tail = b""

    @property
    def eof(self) -> bool:
        return self._d.eof

    @property
    def unused(self) -> bytes:
        return self._d.unused_data + self._tail

    def step(self, data: bytes, max_length: int) -> tuple[bytes, bool]:
        out = self._d.decompress(self._tail + data if self._tail else data, max_length)
        self._tail = self._d.unconsumed_tail
        return out, not self._tail and len(out) < max_length


class _Lib:
    """bz2.BZ2Decompressor / lzma.LZMADecompressor (same interface)."""

    def __init__(self, d: bz2.BZ2Decompressor | lzma.LZMADecompressor):
        self._d = d

    @property
    def eof(self) -> bool:
        return self._d.eof

    @property
    def unused(self) -> bytes:
        return self._d.unused_data

    def step(self, data: bytes, max_length: int) -> tuple[bytes, bool]:
        out = self._d.decompress(data, max_length)
        return out, self._d.needs_input


@dataclass
class _Budget:
    """Caps of one decompression: the most output bytes, and the ratio check's denominator."""

    fmt: str
    what: str
    cap: int
    cap_reason: str  # what the cap is, for the refusal detail
    compressed: int
    limits: Limits
    over_cap_kind: str = "bomb"

    def check(self, produced: int) -> None:
        if produced > self.cap:
            raise ArchiveError(self.fmt, self.over_cap_kind, f"{self.what} expands beyond {self.cap} bytes ({self.cap_reason})")
        if produced >= self.limits.ratio_floor_bytes:
            ratio = produced / max(self.compressed, 1)
            if ratio > self.limits.max_ratio:
                raise ArchiveError(self.fmt, "bomb", f"{self.what}: compression ratio {ratio:.0f} exceeds "
                                   f"{self.limits.max_ratio:.0f}")


def _inflate(dec: _Decompressor, src: bytes, start: int, end: int, out: bytearray, budget: _Budget) -> int:
    """Decompress ``src[start:end]`` onto ``out`` (never beyond ``budget.cap`` + 1 bytes in all);
    returns the offset just past the compressed stream (``end`` when it did not finish)."""
    pos, need = start, True
    while not dec.eof:
        if need:
            if pos >= end:
                break
            feed = src[pos:min(end, pos + CHUNK)]
            pos += len(feed)
        else:
            feed = b""
        chunk, need = dec.step(feed, max(1, min(CHUNK, budget.cap + 1 - len(out))))
        if not chunk and not feed:
            need = True  # no progress without more input
        out += chunk
        budget.check(len(out))
    return pos - len(dec.unused) if dec.eof else pos


# --------------------------------------------------------------------------------------------
# gzip
# --------------------------------------------------------------------------------------------
def gunzip(raw: bytes, limits: Limits) -> bytes:
    """Every member of a gzip stream, concatenated (one text); refusals raise ArchiveError."""
    if len(raw) > limits.max_archive_bytes:
        raise ArchiveError("gzip", "bomb", f"gzip body of {len(raw)} bytes exceeds {limits.max_archive_bytes}")
    cap = min(limits.max_member_bytes, limits.max_total_bytes)
    budget = _Budget("gzip", "gzip payload", cap, "member/total limit", len(raw), limits)
    out = bytearray()
    pos = members = 0
    try:
        while pos < len(raw):
            if raw[pos:pos + 2] != b"\x1f\x8b":
                if members and not raw[pos:].strip(b"\x00"):
                    break  # zero padding after the last member
                raise ArchiveError("gzip", "corrupt", f"{len(raw) - pos} bytes after gzip member {members} "
                                   "are not a gzip member")
            members += 1
            if members > limits.max_members:
                raise ArchiveError("gzip", "too_many", f"more than {limits.max_members} gzip members")
            dec = _Zlib(16 + zlib.MAX_WBITS)
            pos = _inflate(dec, raw, pos, len(raw), out, budget)
            if not dec.eof:
                raise ArchiveError("gzip", "corrupt", f"truncated gzip (member {members})")
    except ArchiveError:
        raise
    except Exception as exc:  # zlib.error (bad header, CRC, length), MemoryError, ...
        raise ArchiveError("gzip", "corrupt", f"corrupt gzip (member {members}): {type(exc).__name__}: {exc}") from None
    payload = bytes(out)
    if payload.startswith(ARCHIVE_MAGIC):
        raise ArchiveError("gzip", "nested", "the gzip payload is itself an archive")
    return payload


# --------------------------------------------------------------------------------------------
# ZIP
# --------------------------------------------------------------------------------------------
def _zip_error(kind: str, detail: str) -> ArchiveError:
    return ArchiveError("zip", kind, detail)


def _check_name(info: zipfile.ZipInfo) -> str:
    """The member's normalised name; raises ``slip`` for anything that could escape a directory."""
    raw = info.filename
    if not raw:
        raise _zip_error("corrupt", "member with an empty name")
    if "\x00" in raw:
        raise _zip_error("slip", f"member name with a NUL byte: {raw!r}")
    name = raw.replace("\\", "/")
    if name.startswith("/") or re.match(r"^[A-Za-z]:", name) or name.startswith("//"):
        raise _zip_error("slip", f"absolute member path: {raw!r}")
    if any(part == ".." for part in name.split("/")):
        raise _zip_error("slip", f"member path with '..': {raw!r}")
    mode = info.external_attr >> 16
    if info.create_system == 3 and stat.S_ISLNK(mode):
        raise _zip_error("slip", f"symlink member: {raw!r}")
    return name


def _is_archive_name(name: str) -> bool:
    lower = name.lower()
    return lower.endswith(ARCHIVE_EXTS) or bool(re.search(r"\.(r\d\d|\d{3})$", lower))


def _check_ratio(name: str, size: int, compressed: int, limits: Limits) -> None:
    if size < limits.ratio_floor_bytes:
        return
    ratio = size / max(compressed, 1)
    if ratio > limits.max_ratio:
        raise _zip_error("bomb", f"member {name!r}: compression ratio {ratio:.0f} exceeds {limits.max_ratio:.0f}")


@dataclass
class ZipArchive:
    """A ZIP whose directory passed every check; ``srt`` lists the SRT members in archive order.
    :meth:`read` streams one member under the caps (the total counts every member read)."""

    data: bytes
    limits: Limits
    entries: int
    srt: list[tuple[str, zipfile.ZipInfo]]
    total: int = field(default=0)

    def read(self, info: zipfile.ZipInfo) -> bytes:
        try:
            payload = self._read(info)
        except ArchiveError:
            raise
        except Exception as exc:  # zlib/bz2/lzma errors, struct.error, EOFError, MemoryError, ...
            raise _zip_error("corrupt", f"member {info.filename!r}: {type(exc).__name__}: {exc}") from None
        self.total += len(payload)
        if payload.startswith(ARCHIVE_MAGIC):
            raise _zip_error("nested", f"member {info.filename!r} is an archive by content")
        return payload

    def _read(self, info: zipfile.ZipInfo) -> bytes:
        data, limits, name = self.data, self.limits, info.filename
        start = _data_offset(data, info)
        end = start + info.compress_size
        if end > len(data):
            raise _zip_error("corrupt", f"member {name!r}: data runs past the end of the archive")
        room = limits.max_total_bytes - self.total
        if info.file_size > room:
            raise _zip_error("bomb", f"members hold more than {limits.max_total_bytes} bytes in all")
        # never more than the declared size + 1 byte: a member longer than its header is refused there
        cap = min(limits.max_member_bytes, info.file_size)
        budget = _Budget("zip", f"member {name!r}", cap, "its declared size", info.compress_size, limits,
                         over_cap_kind="corrupt")
        method = info.compress_type
        if method == zipfile.ZIP_STORED:
            out = bytearray(data[start:start + min(info.compress_size, cap + 1)])
            budget.check(len(out))
            finished = True
        else:
            dec: _Decompressor
            if method == zipfile.ZIP_DEFLATED:
                dec = _Zlib(-15)
            elif method == zipfile.ZIP_BZIP2:
                dec = _Lib(bz2.BZ2Decompressor())
            elif method == zipfile.ZIP_LZMA:
                dec, start = _lzma_member(data, start, end, name)
            else:
                raise _zip_error("corrupt", f"member {name!r}: unsupported compression method {method}")
            out = bytearray()
            _inflate(dec, data, start, end, out, budget)
            # LZMA in ZIP may end without an end marker: the declared size and the CRC decide
            finished = dec.eof or method == zipfile.ZIP_LZMA
        if not finished:
            raise _zip_error("corrupt", f"member {name!r}: truncated compressed data")
        if len(out) != info.file_size:
            raise _zip_error("corrupt", f"member {name!r}: {len(out)} bytes, header says {info.file_size}")
        if zlib.crc32(out) != info.CRC:
            raise _zip_error("corrupt", f"member {name!r}: bad CRC")
        _check_ratio(name, len(out), info.compress_size, limits)
        return bytes(out)


def _data_offset(data: bytes, info: zipfile.ZipInfo) -> int:
    at = info.header_offset
    if at < 0 or at + 30 > len(data) or data[at:at + 4] != b"PK\x03\x04":
        raise _zip_error("corrupt", f"member {info.filename!r}: bad local header")
    name_len, extra_len = struct.unpack_from("<HH", data, at + 26)
    return at + 30 + name_len + extra_len


def _lzma_member(data: bytes, start: int, end: int, name: str) -> tuple[_Decompressor, int]:
    """ZIP's LZMA header (version, properties size, LZMA1 properties) and a raw decompressor."""
    if end - start < 9:
        raise _zip_error("corrupt", f"member {name!r}: truncated LZMA header")
    (psize,) = struct.unpack_from("<H", data, start + 2)
    if psize != 5:
        raise _zip_error("corrupt", f"member {name!r}: LZMA properties of {psize} bytes")
    props = data[start + 4]
    if props >= 9 * 5 * 5:
        raise _zip_error("corrupt", f"member {name!r}: bad LZMA properties")
    (dict_size,) = struct.unpack_from("<I", data, start + 5)
    filt = {"id": lzma.FILTER_LZMA1, "lc": props % 9, "lp": (props // 9) % 5, "pb": props // 45,
            "dict_size": dict_size}
    return _Lib(lzma.LZMADecompressor(lzma.FORMAT_RAW, filters=[filt])), start + 9


def open_zip(data: bytes, limits: Limits) -> ZipArchive:
    """Parse and check a ZIP's directory (sizes, names, nesting, encryption) without inflating."""
    if not isinstance(data, (bytes, bytearray)):
        raise _zip_error("corrupt", f"expected bytes, got {type(data).__name__}")
    data = bytes(data)
    if len(data) > limits.max_archive_bytes:
        raise _zip_error("bomb", f"archive of {len(data)} bytes exceeds {limits.max_archive_bytes}")
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except Exception as exc:  # BadZipFile, UnicodeDecodeError (names flagged UTF-8), ValueError, ...
        raise _zip_error("corrupt", f"not a readable ZIP: {type(exc).__name__}: {exc}") from None
    try:
        with zf:
            infos = zf.infolist()
            return ZipArchive(data, limits, len(infos), _plan(infos, limits))
    except ArchiveError:
        raise
    except Exception as exc:  # malformed headers surface as assorted errors inside zipfile
        raise _zip_error("corrupt", f"malformed archive: {type(exc).__name__}: {exc}") from None


def _plan(infos: list[zipfile.ZipInfo], limits: Limits) -> list[tuple[str, zipfile.ZipInfo]]:
    if len(infos) > limits.max_members:
        raise _zip_error("too_many", f"{len(infos)} members (limit {limits.max_members})")
    declared_total = 0
    wanted: list[tuple[str, zipfile.ZipInfo]] = []
    for info in infos:
        name = _check_name(info)
        if info.is_dir():
            continue
        if _is_archive_name(name):
            raise _zip_error("nested", f"archive inside the archive: {info.filename!r}")
        if info.flag_bits & 0x1:
            raise _zip_error("corrupt", f"encrypted member: {info.filename!r}")
        if info.file_size > limits.max_member_bytes:
            raise _zip_error("bomb", f"member {info.filename!r} declares {info.file_size} bytes "
                             f"(limit {limits.max_member_bytes})")
        declared_total += info.file_size
        if declared_total > limits.max_total_bytes:
            raise _zip_error("bomb", f"members declare {declared_total}+ bytes in all "
                             f"(limit {limits.max_total_bytes})")
        _check_ratio(info.filename, info.file_size, info.compress_size, limits)
        if name.lower().endswith(limits.srt_exts):
            wanted.append((name, info))
    if not wanted:
        raise _zip_error("no_srt", f"no SRT member among {len(infos)} entries")
    return wanted


def read_zip(data: bytes, limits: Limits) -> list[tuple[str, bytes]]:
    """The ``(name, bytes)`` of every SRT member, in archive order; refusals raise ArchiveError."""
    archive = open_zip(data, limits)
    return [(name, archive.read(info)) for name, info in archive.srt]


# --------------------------------------------------------------------------------------------
# one payload (the decoder's use)
# --------------------------------------------------------------------------------------------
def unpack_one(raw: bytes, limits: Limits) -> tuple[str, bytes] | None:
    """``(kind, payload)`` of a gzip body (kind ``gzip``) or a ZIP holding exactly one SRT member
    (kind ``zip:<name>``); None when ``raw`` is not an archive; refusals raise ArchiveError
    (other archive formats: kind ``unsupported``)."""
    if raw[:2] == b"\x1f\x8b":
        return "gzip", gunzip(raw, limits)
    if raw[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        archive = open_zip(raw, limits)
        if len(archive.srt) != 1:
            raise _zip_error("too_many", f"zip holds {len(archive.srt)} .srt members ({archive.entries} entries); "
                             "one expected")
        name, info = archive.srt[0]
        return f"zip:{name}", archive.read(info)
    if raw[:3] == b"BZh" and raw[4:10] == b"1AY&SY":
        raise ArchiveError("bzip2", "unsupported", "bzip2 payloads are not unpacked")
    for magic, kind in _NOT_UNPACKED:
        if raw.startswith(magic):
            raise ArchiveError(kind, "unsupported", f"{kind} archives are not unpacked")
    return None
