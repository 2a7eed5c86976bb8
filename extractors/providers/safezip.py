"""Safe, in-memory extraction of subtitle archives (SubDL serves ZIPs).

Nothing is ever written to disk: the archive is read from ``bytes`` and the SRT members come back
as ``bytes``. Every refusal is a :class:`~extractors.providers.errors.ProviderError` whose reason
code names it:

==================  ===========================================================================
``zip_corrupt``     not a ZIP, a bad CRC, an encrypted or unsupported member, a member whose real
                    size differs from its header
``zip_too_many``    more than ``max_members`` entries
``zip_slip``        an absolute path, a drive letter, a ``..`` component, a NUL byte, or a
                    symlink entry (checked for *every* member, SRT or not)
``zip_nested``      a member that is an archive (by extension, or an SRT member whose bytes start
                    with an archive's magic number)
``zip_bomb``        the archive, a member or the total above the size limits, or a member whose
                    compression ratio is above ``max_ratio`` (declared sizes are checked first,
                    then the real ones while reading, never reading more than the limit + 1 byte)
``zip_no_srt``      no ``.srt`` member
==================  ===========================================================================

Non-SRT members that pass the path/nesting/size checks (``.nfo``, ``.txt`` read-mes) are ignored.
"""

from __future__ import annotations

import io
import re
import stat
import zipfile
import zlib
from dataclasses import dataclass

from extractors.providers.errors import ProviderError

ARCHIVE_EXTS = (".zip", ".rar", ".7z", ".gz", ".tgz", ".tar", ".bz2", ".tbz", ".xz", ".txz", ".zst",
                ".lzma", ".cab", ".jar", ".arj", ".lzh", ".z", ".001")
ARCHIVE_MAGIC = (b"PK\x03\x04", b"PK\x05\x06", b"PK\x07\x08", b"Rar!\x1a\x07", b"7z\xbc\xaf\x27\x1c",
                 b"\x1f\x8b", b"BZh", b"\xfd7zXZ\x00", b"\x28\xb5\x2f\xfd", b"MSCF")


@dataclass(frozen=True)
class ZipLimits:
    max_archive_bytes: int = 20 * 1024 * 1024
    max_members: int = 32
    max_member_bytes: int = 10 * 1024 * 1024
    max_total_bytes: int = 40 * 1024 * 1024
    #: uncompressed / compressed; SRT text compresses 3-8x, a bomb hundreds to millions
    max_ratio: float = 100.0
    #: members smaller than this are not ratio-checked (tiny repetitive files compress a lot)
    ratio_floor_bytes: int = 256 * 1024
    srt_exts: tuple[str, ...] = (".srt",)


def _refuse(code: str, detail: str) -> ProviderError:
    return ProviderError(code, detail, retryable=False)


def _check_name(info: zipfile.ZipInfo) -> str:
    """The member's normalised name; raises zip_slip for anything that could escape a directory."""
    raw = info.filename
    if not raw:
        raise _refuse("zip_corrupt", "member with an empty name")
    if "\x00" in raw:
        raise _refuse("zip_slip", f"member name with a NUL byte: {raw!r}")
    name = raw.replace("\\", "/")
    if name.startswith("/") or re.match(r"^[A-Za-z]:", name) or name.startswith("//"):
        raise _refuse("zip_slip", f"absolute member path: {raw!r}")
    if any(part == ".." for part in name.split("/")):
        raise _refuse("zip_slip", f"member path with '..': {raw!r}")
    mode = info.external_attr >> 16
    if info.create_system == 3 and stat.S_ISLNK(mode):
        raise _refuse("zip_slip", f"symlink member: {raw!r}")
    return name


def _is_archive_name(name: str) -> bool:
    lower = name.lower()
    return lower.endswith(ARCHIVE_EXTS) or bool(re.search(r"\.(r\d\d|\d{3})$", lower))


def extract_srt(data: bytes, limits: ZipLimits = ZipLimits()) -> list[tuple[str, bytes]]:
    """The ``(name, bytes)`` of every SRT member, in archive order; refusals raise ProviderError."""
    if not isinstance(data, (bytes, bytearray)):
        raise _refuse("zip_corrupt", f"expected bytes, got {type(data).__name__}")
    if len(data) > limits.max_archive_bytes:
        raise _refuse("zip_bomb", f"archive of {len(data)} bytes exceeds {limits.max_archive_bytes}")
    try:
        zf = zipfile.ZipFile(io.BytesIO(bytes(data)))
    except Exception as exc:  # BadZipFile, NotImplementedError ("zip file version 6.4"), ...
        raise _refuse("zip_corrupt", f"not a readable ZIP: {type(exc).__name__}: {exc}") from None
    with zf:
        try:
            return _extract(zf, limits)
        except ProviderError:
            raise
        except Exception as exc:  # malformed headers surface as assorted errors inside zipfile
            raise _refuse("zip_corrupt", f"malformed archive: {type(exc).__name__}: {exc}") from None


def _extract(zf: zipfile.ZipFile, limits: ZipLimits) -> list[tuple[str, bytes]]:
    infos = zf.infolist()
    if len(infos) > limits.max_members:
        raise _refuse("zip_too_many", f"{len(infos)} members (limit {limits.max_members})")
    declared_total = 0
    wanted: list[tuple[str, zipfile.ZipInfo]] = []
    for info in infos:
        name = _check_name(info)
        if info.is_dir():
            continue
        if _is_archive_name(name):
            raise _refuse("zip_nested", f"archive inside the archive: {info.filename!r}")
        if info.flag_bits & 0x1:
            raise _refuse("zip_corrupt", f"encrypted member: {info.filename!r}")
        if info.file_size > limits.max_member_bytes:
            raise _refuse("zip_bomb", f"member {info.filename!r} declares {info.file_size} bytes "
                          f"(limit {limits.max_member_bytes})")
        declared_total += info.file_size
        if declared_total > limits.max_total_bytes:
            raise _refuse("zip_bomb", f"members declare {declared_total}+ bytes in all "
                          f"(limit {limits.max_total_bytes})")
        _check_ratio(info.filename, info.file_size, info.compress_size, limits)
        if name.lower().endswith(limits.srt_exts):
            wanted.append((name, info))
    if not wanted:
        raise _refuse("zip_no_srt", f"no SRT member among {len(infos)} entries")
    out: list[tuple[str, bytes]] = []
    total = 0
    for name, info in wanted:
        payload = _read_member(zf, info, limits)
        total += len(payload)
        if total > limits.max_total_bytes:
            raise _refuse("zip_bomb", f"members hold more than {limits.max_total_bytes} bytes in all")
        if payload.startswith(ARCHIVE_MAGIC):
            raise _refuse("zip_nested", f"member {info.filename!r} is an archive by content")
        out.append((name, payload))
    return out


def _check_ratio(name: str, size: int, compressed: int, limits: ZipLimits) -> None:
    if size < limits.ratio_floor_bytes:
        return
    ratio = size / max(compressed, 1)
    if ratio > limits.max_ratio:
        raise _refuse("zip_bomb", f"member {name!r}: compression ratio {ratio:.0f} exceeds {limits.max_ratio:.0f}")


def _read_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, limits: ZipLimits) -> bytes:
    try:
        with zf.open(info) as fh:
            payload = fh.read(limits.max_member_bytes + 1)
            if len(payload) > limits.max_member_bytes:
                raise _refuse("zip_bomb", f"member {info.filename!r} expands beyond {limits.max_member_bytes} bytes")
            if fh.read(1):  # more data than the header said, below the size limit
                raise _refuse("zip_corrupt", f"member {info.filename!r} is longer than its header says")
    except ProviderError:
        raise
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError, RuntimeError, ValueError) as exc:
        raise _refuse("zip_corrupt", f"member {info.filename!r}: {type(exc).__name__}: {exc}") from None
    if len(payload) != info.file_size:
        raise _refuse("zip_corrupt", f"member {info.filename!r}: {len(payload)} bytes, header says {info.file_size}")
    _check_ratio(info.filename, len(payload), info.compress_size, limits)
    return payload


def pick_srt(members: list[tuple[str, bytes]]) -> tuple[str, bytes]:
    """The member a provider returns: the largest SRT (a full track beats a sample or a part),
    ties broken by name."""
    if not members:
        raise _refuse("zip_no_srt", "no SRT member")
    return sorted(members, key=lambda m: (-len(m[1]), m[0]))[0]
