"""A provider over a local directory of pre-downloaded subtitles (issue 2): the sample world
serves candidates through it, and users with their own dumps use it in live builds.

Layout: ``root/<imdb_id>/<language>/<file_id>.<ext>`` (``.srt``, ``.sub``, ``.txt``, ``.vtt``,
``.ass``, ``.ssa``, or no extension), each optionally with ``<file_id>.json`` beside it holding the
OpenSubtitles ``attributes`` object of that file (``download_count``, ``uploader.name``,
``release``, ``fps``, ``hearing_impaired``, ``machine_translated``, ``ai_translated``,
``upload_date``, ``feature_details.imdb_id``; a full ``{"id", "type", "attributes"}`` search item
is accepted too). Without a sidecar the download count is 0.

``download`` returns the file's bytes untouched. Failures raise
:class:`~extractors.providers.errors.ProviderError` with a reason code; a missing film or
language directory is simply "no candidates".
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from cinesub.records import Candidate
from extractors.providers.errors import ProviderError

_IMDB = re.compile(r"^tt\d{7,8}$")
_LANG = re.compile(r"^[a-z]{2,3}(?:-[A-Za-z]{2,4})?$")
SUBTITLE_EXTS = (".srt", ".sub", ".txt", ".vtt", ".ass", ".ssa", "")


class LocalDirProvider:
    name = "local"

    def __init__(self, root: Path | str):
        self.root = Path(root)

    # ------------------------------------------------------------------------------------------
    def _dir(self, imdb_id: str, language: str) -> Path:
        if not isinstance(imdb_id, str) or not _IMDB.match(imdb_id):
            raise ProviderError("invalid_query", f"not a canonical IMDb id: {imdb_id!r}")
        if not isinstance(language, str) or not _LANG.match(language):
            raise ProviderError("invalid_query", f"not a language code: {language!r}")
        return self.root / imdb_id / language

    def search(self, imdb_id: str, language: str) -> list[Candidate]:
        """Candidates for one film and language, highest download count first (ties by file id)."""
        d = self._dir(imdb_id, language)
        if not d.is_dir():
            return []
        try:
            entries = sorted(d.iterdir())
        except OSError as exc:
            raise ProviderError("unreadable", f"{d}: {exc}") from exc
        files: dict[str, Path] = {}
        for p in entries:
            if p.suffix.lower() == ".json" or p.name.startswith(".") or not p.is_file():
                continue
            if p.suffix.lower() not in SUBTITLE_EXTS:
                continue
            stem = p.stem if p.suffix else p.name
            # one file per id; prefer .srt when a dump holds several formats of the same id
            if stem not in files or p.suffix.lower() == ".srt":
                files[stem] = p
        out = []
        for file_id, path in files.items():
            side = self._sidecar(path.with_name(f"{file_id}.json"))
            out.append(self._candidate(imdb_id, language, file_id, path, side))
        out.sort(key=lambda c: (-c.download_count, c.file_id))
        return out

    def download(self, candidate: Candidate) -> bytes:
        """The raw bytes of the candidate's file, exactly as stored."""
        d = self._dir(candidate.imdb_id, candidate.language)
        path = self._path_of(d, candidate)
        try:
            return path.read_bytes()
        except FileNotFoundError as exc:
            raise ProviderError("not_found", f"{path}: file is gone") from exc
        except OSError as exc:
            raise ProviderError("unreadable", f"{path}: {exc}") from exc

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
    def _sidecar(path: Path) -> dict[str, Any]:
        if not path.exists():
            return {}
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise ProviderError("unreadable", f"{path}: {exc}") from exc
        except (UnicodeDecodeError, ValueError) as exc:
            raise ProviderError("bad_sidecar", f"{path}: not JSON ({exc})") from exc
        if not isinstance(data, dict):
            raise ProviderError("bad_sidecar", f"{path}: expected a JSON object")
        if isinstance(data.get("attributes"), dict):
            data = data["attributes"]
        return data

    @staticmethod
    def _candidate(imdb_id: str, language: str, file_id: str, path: Path, side: dict[str, Any]) -> Candidate:
        def num(v: Any, kind: type) -> Any:
            try:
                return kind(v) if v is not None else None
            except (TypeError, ValueError):
                return None

        feature = side.get("feature_details") if isinstance(side.get("feature_details"), dict) else {}
        fid = feature.get("imdb_id")
        feature_imdb = None
        if isinstance(fid, int) or (isinstance(fid, str) and fid.isdigit()):
            feature_imdb = f"tt{int(fid):07d}"
        elif isinstance(fid, str) and _IMDB.match(fid):
            feature_imdb = fid
        uploader = side.get("uploader")
        return Candidate(
            imdb_id=imdb_id,
            language=language,
            provider="local",
            file_id=file_id,
            download_count=num(side.get("download_count"), int) or 0,
            uploader=uploader.get("name") if isinstance(uploader, dict) else (uploader if isinstance(uploader, str) else None),
            release=side.get("release") if isinstance(side.get("release"), str) else None,
            fps=num(side.get("fps"), float),
            hearing_impaired=bool(side.get("hearing_impaired", False)),
            machine_translated=bool(side.get("machine_translated", False)),
            ai_translated=bool(side.get("ai_translated", False)),
            upload_date=side.get("upload_date") if isinstance(side.get("upload_date"), str) else None,
            feature_imdb_id=feature_imdb,
            url=path.resolve().as_uri(),
        )
