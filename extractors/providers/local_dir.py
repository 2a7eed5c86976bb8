"""A provider over a local directory of pre-downloaded subtitles (issue 2): the sample world
serves candidates through it, and users with their own dumps use it in live builds.

Layout: ``root/<imdb_id>/<language>/<file_id>.<ext>`` (``.srt``, ``.sub``, ``.txt``, ``.vtt``,
``.ass``, ``.ssa``, or no extension), each optionally with ``<file_id>.json`` beside it holding the
OpenSubtitles ``attributes`` object of that file (``download_count``, ``uploader.name``,
``release``, ``fps``, ``hearing_impaired``, ``machine_translated``, ``ai_translated``,
``upload_date``, ``feature_details.imdb_id``; a full ``{"id", "type", "attributes"}`` search item
is accepted too). Without a sidecar the download count is 0.

One bad entry never hides the good ones (issue 14): :meth:`LocalDirProvider.scan` returns the
candidates of a film and language *and* every entry it refused, each with a reason code
(:data:`REFUSAL_CODES`): a garbage sidecar refuses its own file only; FIFOs, sockets and devices
are refused without ever being opened; dangling links, folders where a file belongs, names that
are not UTF-8, unreadable or oversized files, orphan sidecars, unknown extensions and a second
file of the same id are refused by name; a film or language folder that is a file (or an unreadable
folder) refuses that whole slot (file id ``-``). Hidden entries (``.name``) are the only ones passed over.
:meth:`search` is the provider interface (the candidates only).

``download`` returns the file's bytes untouched. Failures raise
:class:`~extractors.providers.errors.ProviderError` with a reason code; a missing film or
language directory is simply "no candidates".
"""

from __future__ import annotations

import errno
import json
import math
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cinesub.records import Candidate
from extractors.providers.errors import ProviderError

_IMDB = re.compile(r"^tt\d{7,8}$")
_LANG = re.compile(r"^[a-z]{2,3}(?:-[A-Za-z]{2,4})?$")
SUBTITLE_EXTS = (".srt", ".sub", ".txt", ".vtt", ".ass", ".ssa", "")
#: largest subtitle file served (bigger ones are refused ``too_large``, never read into memory)
MAX_FILE_BYTES = 64 * 1024 * 1024
#: largest sidecar read
MAX_SIDECAR_BYTES = 1024 * 1024
_MAX_COUNT = 2**63 - 1  # candidates.download_count is a BIGINT

#: Why an entry of a language folder is not a candidate (``attempts.outcome = 'search_rejected'``).
REFUSAL_CODES: dict[str, str] = {
    "bad_sidecar": "the file's .json sidecar is not the expected JSON object (syntax, type of a field, "
                   "not UTF-8, a folder, a FIFO, a dangling link, too large)",
    "not_a_file": "a folder, FIFO, socket or device where a subtitle file belongs (never opened)",
    "dangling_link": "a symbolic link whose target does not exist",
    "bad_file_name": "a name that is not valid UTF-8 (shown with \\x escapes)",
    "unreadable": "the file or folder cannot be read (permission or I/O error)",
    "too_large": f"a subtitle file above {MAX_FILE_BYTES} bytes",
    "unsupported_extension": "an extension that is not a subtitle format: " + ", ".join(e for e in SUBTITLE_EXTS if e),
    "orphan_sidecar": "a .json sidecar without a subtitle file of the same id",
    "duplicate_id": "a second file with the same id (the .srt, else the first by name, is served)",
    "not_a_directory": "the film or language folder is a file (the whole slot, file id '-')",
    "multi_part": "the sidecar says the file is one part of a multi-file (CD1/CD2) upload (nb_cd > 1 or "
                  "several files): never a whole film's track (docs/providers.md, multi-file items)",
}


@dataclass(frozen=True)
class Refusal:
    """An entry of a film's language folder that is not a candidate, and why."""

    file_id: str  # the id the file would have had ("-" for the folder itself); never undecodable text
    reason_code: str
    detail: str


@dataclass
class Listing:
    """What :meth:`LocalDirProvider.scan` found for one film and language."""

    candidates: list[Candidate] = field(default_factory=list)
    refused: list[Refusal] = field(default_factory=list)


def printable_name(name: str) -> str:
    """A file name as valid text: bytes that are not UTF-8 shown as ``\\xNN``."""
    return os.fsencode(name).decode("utf-8", "backslashreplace")


class LocalDirProvider:
    name = "local"

    def __init__(self, root: Path | str, *, max_file_bytes: int = MAX_FILE_BYTES):
        self.root = Path(root)
        self.max_file_bytes = max_file_bytes

    # ------------------------------------------------------------------------------------------
    def _dir(self, imdb_id: str, language: str) -> Path:
        if not isinstance(imdb_id, str) or not _IMDB.match(imdb_id):
            raise ProviderError("invalid_query", f"not a canonical IMDb id: {imdb_id!r}")
        if not isinstance(language, str) or not _LANG.match(language):
            raise ProviderError("invalid_query", f"not a language code: {language!r}")
        return self.root / imdb_id / language

    def search(self, imdb_id: str, language: str) -> list[Candidate]:
        """Candidates for one film and language, highest download count first (ties by file id)."""
        return self.scan(imdb_id, language).candidates

    def scan(self, imdb_id: str, language: str) -> Listing:
        """Candidates for one film and language (as :meth:`search`) and every refused entry."""
        d = self._dir(imdb_id, language)
        out = Listing()
        for folder in (d.parent, d):
            kind = _kind(folder)
            if kind == "missing":
                return out
            if kind != "dir":
                out.refused.append(Refusal("-", "not_a_directory", f"{folder}: {kind}, not a folder"))
                return out
        try:
            with os.scandir(d) as it:
                names = sorted(entry.name for entry in it)
        except OSError as exc:
            if exc.errno in (errno.ENOENT, errno.ENOTDIR):
                return out
            out.refused.append(Refusal("-", "unreadable", f"{d}: {exc.strerror or exc}"))
            return out

        files: dict[str, Path] = {}
        sidecars: dict[str, Path] = {}
        for name in names:
            shown = printable_name(name)
            if name.startswith("."):
                continue
            p = d / name
            suffix = p.suffix.lower()
            stem = p.stem if p.suffix else p.name
            if shown != name:
                out.refused.append(Refusal(printable_name(stem), "bad_file_name", f"{d / shown}: name is not UTF-8"))
                continue
            if suffix == ".json":
                sidecars[stem] = p
                continue
            if suffix not in SUBTITLE_EXTS:
                out.refused.append(Refusal(stem, "unsupported_extension", f"{p}: {p.suffix} is not a subtitle format"))
                continue
            refusal = self._check_file(stem, p)
            if refusal is not None:
                out.refused.append(refusal)
                continue
            if stem in files:
                # one file per id; prefer .srt when a dump holds several formats of the same id
                keep, drop = (p, files[stem]) if suffix == ".srt" else (files[stem], p)
                files[stem] = keep
                out.refused.append(Refusal(stem, "duplicate_id", f"{drop}: id {stem} is served by {keep.name}"))
                continue
            files[stem] = p
        for stem, side in sidecars.items():
            if stem not in files and not any(r.file_id == stem for r in out.refused):
                out.refused.append(Refusal(stem, "orphan_sidecar", f"{side}: no subtitle file with id {stem}"))
        for file_id, path in files.items():
            try:
                side = self._sidecar(path.with_name(f"{file_id}.json"), sidecars.get(file_id))
                out.candidates.append(self._candidate(imdb_id, language, file_id, path, side))
            except ProviderError as exc:
                out.refused.append(Refusal(file_id, exc.reason_code, exc.detail))
        out.candidates.sort(key=lambda c: (-c.download_count, c.file_id))
        out.refused.sort(key=lambda r: (r.file_id, r.reason_code, r.detail))
        return out

    def _check_file(self, file_id: str, p: Path) -> Refusal | None:
        """Why ``p`` cannot be served as a subtitle file (``None`` when it can); never opens it."""
        kind = _kind(p)
        if kind == "dangling link":
            return Refusal(file_id, "dangling_link", f"{p}: the link's target {os.readlink(p)!s} does not exist")
        if kind == "missing":
            return Refusal(file_id, "unreadable", f"{p}: vanished while listing")
        if kind.startswith("unreadable"):
            return Refusal(file_id, "unreadable", f"{p}: {kind}")
        if kind != "file":
            return Refusal(file_id, "not_a_file", f"{p}: {kind}, not a regular file")
        try:
            size = p.stat().st_size
        except OSError as exc:
            return Refusal(file_id, "unreadable", f"{p}: {exc.strerror or exc}")
        if size > self.max_file_bytes:
            return Refusal(file_id, "too_large", f"{p}: {size} bytes > {self.max_file_bytes}")
        if not os.access(p, os.R_OK):
            return Refusal(file_id, "unreadable", f"{p}: permission denied")
        return None

    def download(self, candidate: Candidate) -> bytes:
        """The raw bytes of the candidate's file, exactly as stored."""
        d = self._dir(candidate.imdb_id, candidate.language)
        path = self._path_of(d, candidate)
        return _read_regular(path, self.max_file_bytes)

    # ------------------------------------------------------------------------------------------
    def _path_of(self, d: Path, candidate: Candidate) -> Path:
        if candidate.url and candidate.url.startswith("file://"):
            from urllib.parse import unquote, urlparse

            p = Path(unquote(urlparse(candidate.url).path))
            if p.parent == d:
                return p
        if "/" in candidate.file_id or "\\" in candidate.file_id or candidate.file_id in ("", ".", ".."):
            raise ProviderError("invalid_query", f"not a file id: {candidate.file_id!r}")
        for ext in SUBTITLE_EXTS:
            p = d / f"{candidate.file_id}{ext}"
            if p.is_file():
                return p
        raise ProviderError("not_found", f"no file for id {candidate.file_id} in {d}")

    @staticmethod
    def _sidecar(path: Path, listed: Path | None = None) -> dict[str, Any]:
        """The sidecar's attributes ({} when there is none); ``bad_sidecar`` for anything else."""
        path = listed or path
        kind = _kind(path)
        if kind == "missing":
            return {}
        if kind != "file":
            raise ProviderError("bad_sidecar", f"{path}: {kind}, not a JSON file")
        try:
            raw = _read_regular(path, MAX_SIDECAR_BYTES)
        except ProviderError as exc:
            raise ProviderError("bad_sidecar", exc.detail) from exc
        try:
            data = json.loads(raw.decode("utf-8-sig"), parse_constant=_no_constant)
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            raise ProviderError("bad_sidecar", f"{path}: not JSON ({type(exc).__name__}: {str(exc)[:120]})") from exc
        if not isinstance(data, dict):
            raise ProviderError("bad_sidecar", f"{path}: expected a JSON object, got {type(data).__name__}")
        if isinstance(data.get("attributes"), dict):
            data = data["attributes"]
        return {"_path": str(path), **data}

    @staticmethod
    def _candidate(imdb_id: str, language: str, file_id: str, path: Path, side: dict[str, Any]) -> Candidate:
        where = side.pop("_path", None)

        def bad(key: str, why: str) -> ProviderError:
            return ProviderError("bad_sidecar", f"{where}: {key} = {side.get(key)!r}: {why}")

        nb_cd, parts = side.get("nb_cd"), side.get("files")
        n_parts = max(nb_cd if isinstance(nb_cd, int) and not isinstance(nb_cd, bool) else 1,
                      len(parts) if isinstance(parts, list) else 1)
        if n_parts > 1:
            raise ProviderError("multi_part", f"{where}: one of {n_parts} parts of a multi-file upload")

        def count() -> int:
            v = side.get("download_count")
            if v is None:
                return 0
            if isinstance(v, str) and v.strip().isdigit():
                v = int(v)
            elif isinstance(v, float) and v.is_integer() and 0 <= v <= _MAX_COUNT:
                v = int(v)
            if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= _MAX_COUNT:
                raise bad("download_count", "expected a whole number >= 0")
            return v

        def fps() -> float | None:
            v = side.get("fps")
            if v is None:
                return None
            if isinstance(v, bool) or not isinstance(v, (int, float, str)):
                raise bad("fps", "expected a number")
            try:
                f = float(v)
            except ValueError:
                raise bad("fps", "expected a number") from None
            if not math.isfinite(f) or f < 0:
                raise bad("fps", "expected a finite number >= 0")
            return f

        def text(key: str) -> str | None:
            v = side.get(key)
            if v is not None and not isinstance(v, str):
                raise bad(key, "expected a string")
            return v

        def flag(key: str) -> bool:
            v = side.get(key)
            if v in (0, 1) and not isinstance(v, float):
                return bool(v)
            if v is not None and not isinstance(v, bool):
                raise bad(key, "expected true or false")
            return bool(v)

        feature = side.get("feature_details")
        if feature is not None and not isinstance(feature, dict):
            raise bad("feature_details", "expected an object")
        fid = (feature or {}).get("imdb_id")
        feature_imdb = None
        if isinstance(fid, int) and not isinstance(fid, bool) and 0 < fid < 10**8:
            feature_imdb = f"tt{fid:07d}"
        elif isinstance(fid, str) and fid.isdigit() and 0 < int(fid) < 10**8:
            feature_imdb = f"tt{int(fid):07d}"
        elif isinstance(fid, str) and _IMDB.match(fid):
            feature_imdb = fid
        elif fid is not None:
            raise ProviderError("bad_sidecar", f"{where}: feature_details.imdb_id = {fid!r}: not an IMDb id")
        uploader = side.get("uploader")
        if isinstance(uploader, dict):
            uploader = uploader.get("name")
        if uploader is not None and not isinstance(uploader, str):
            raise bad("uploader", "expected a string or an object with a name")
        return Candidate(
            imdb_id=imdb_id,
            language=language,
            provider="local",
            file_id=file_id,
            download_count=count(),
            uploader=uploader,
            release=text("release"),
            fps=fps(),
            hearing_impaired=flag("hearing_impaired"),
            machine_translated=flag("machine_translated"),
            ai_translated=flag("ai_translated"),
            upload_date=text("upload_date"),
            feature_imdb_id=feature_imdb,
            url=path.resolve().as_uri(),
        )


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _kind(p: Path) -> str:
    """What ``p`` is, without opening it: file, dir, missing, dangling link, fifo, socket, ..."""
    try:
        st = os.stat(p)
    except FileNotFoundError:
        return "dangling link" if os.path.islink(p) else "missing"
    except NotADirectoryError:
        return "missing"
    except OSError as exc:
        return f"unreadable ({exc.strerror or exc})"
    mode = st.st_mode
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def _read_regular(path: Path, limit: int) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes. Opened non-blocking and checked
    with fstat, so a FIFO (or a file swapped for one) is refused instead of blocking the build."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError as exc:
        raise ProviderError("not_found", f"{path}: file is gone") from exc
    except OSError as exc:
        raise ProviderError("unreadable", f"{path}: {exc.strerror or exc}") from exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ProviderError("unreadable", f"{path}: not a regular file")
        if st.st_size > limit:
            raise ProviderError("too_large", f"{path}: {st.st_size} bytes > {limit}")
        chunks, total = [], 0
        while chunk := os.read(fd, 1 << 20):
            total += len(chunk)
            if total > limit:
                raise ProviderError("too_large", f"{path}: more than {limit} bytes")
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise ProviderError("unreadable", f"{path}: {exc.strerror or exc}") from exc
    finally:
        os.close(fd)
