"""Safe, in-memory extraction of subtitle archives (SubDL serves ZIPs).

The reading itself is :mod:`extractors.archive`, the one archive reader the decoder uses too:
stored, deflate, bzip2 and LZMA members are decompressed in chunks under the caps of
:class:`ZipLimits`, never trusting declared sizes. Nothing is ever written to disk: the archive
is read from ``bytes`` and the SRT members come back as ``bytes``. Every refusal is a
:class:`~extractors.providers.errors.ProviderError` whose reason code names it:

==================  ===========================================================================
``zip_corrupt``     not a ZIP, a bad CRC, an encrypted or unsupported member, a member whose real
                    size differs from its header, and any exception raised while reading it
                    (names flagged UTF-8 that are not, ``struct.error``, ``EOFError``, ``zlib`` /
                    ``bz2`` / ``lzma`` errors, ...)
``zip_too_many``    more than ``max_members`` entries
``zip_slip``        an absolute path, a drive letter, a ``..`` component, a NUL byte, or a
                    symlink entry (checked for *every* member, SRT or not)
``zip_nested``      a member that is an archive (by extension, or an SRT member whose bytes start
                    with an archive's magic number)
``zip_bomb``        the archive, a member or the total above the size limits, or a member whose
                    compression ratio is above ``max_ratio`` (declared sizes are checked first,
                    then the real ones while decompressing, never reading more than the limit + 1
                    byte, for every compression method)
``ass_only``        no ``.srt`` member, but ``.ass``/``.ssa`` ones (the corpus holds SRT only;
                    nothing is converted)
``zip_no_srt``      no ``.srt`` member (and no ``.ass``/``.ssa`` either)
==================  ===========================================================================

Non-SRT members that pass the path/nesting/size checks (``.nfo``, ``.txt`` read-mes) are ignored.
"""

from __future__ import annotations

import dataclasses

from extractors.archive import ARCHIVE_EXTS, ARCHIVE_MAGIC, ArchiveError, open_zip, read_zip
from extractors.archive import Limits as ZipLimits
from extractors.providers.errors import ProviderError

__all__ = ["ARCHIVE_EXTS", "ARCHIVE_MAGIC", "ZipLimits", "extract_srt", "pick_srt"]


def _refuse(code: str, detail: str) -> ProviderError:
    return ProviderError(code, detail, retryable=False)


def extract_srt(data: bytes, limits: ZipLimits = ZipLimits()) -> list[tuple[str, bytes]]:
    """The ``(name, bytes)`` of every SRT member, in archive order; refusals raise ProviderError."""
    try:
        return read_zip(data, limits)
    except ArchiveError as exc:
        if exc.reason_code == "zip_no_srt" and _has_ass(data, limits):
            raise _refuse("ass_only", f"only .ass/.ssa subtitle members ({exc.detail})") from None
        raise _refuse(exc.reason_code, exc.detail) from None


def _has_ass(data: bytes, limits: ZipLimits) -> bool:
    """Whether the (already directory-checked) archive holds .ass/.ssa members; nothing inflated."""
    try:
        open_zip(data, dataclasses.replace(limits, srt_exts=(".ass", ".ssa")))
    except ArchiveError:
        return False
    return True


def pick_srt(members: list[tuple[str, bytes]]) -> tuple[str, bytes]:
    """The member a provider returns: the largest SRT (a full track beats a sample or a part),
    ties broken by name."""
    if not members:
        raise _refuse("zip_no_srt", "no SRT member")
    return sorted(members, key=lambda m: (-len(m[1]), m[0]))[0]
