"""Multi-part subtitle uploads (OpenSubtitles ``files`` with several entries, SubDL ZIPs with CD1/CD2
members): which parts an upload holds, and whether they can be joined into one film's track.

A part is never a film's whole track. The parts are joined only where the offsets are certain,
else the candidate is refused with reason ``multi_part`` (a :class:`NotJoinable` here; the
providers turn it into a :class:`~extractors.providers.errors.ProviderError`).

Before any download (:func:`plan_parts`, metadata only — no quota spent):

* every file entry has a numeric ``file_id`` and ``cd_number``; the ``cd_number`` values are exactly
  ``1..n`` (order by ``cd_number``, never by name: real names do not always say CD1/CD2 — "03
  Goldfinger 1", "Octopus (2000)" twice); ``nb_cd``, when present, equals ``n``;
* no file name names another language than the item's ("…(E).german" in an English upload) or
  bonus material (trailer, documentary, featurette, …): one real upload (Moonraker) holds four
  unrelated files.

After the download (:func:`join_parts`), joined only when all of these hold:

* every part decodes and parses (strict parser) with at least one entry;
* every part reads as the expected language (the majority language of
  :func:`validators.language.language_share`);
* part ``k+1``'s first cue starts at or after part ``k``'s last cue end — the timestamps are
  already absolute. A part that restarts near 0 (each CD timed from its own start) has an offset
  nobody knows for certain (it is not the previous part's last cue end: there is a gap of unknown
  length between the last cue and the end of the CD), so it is refused, never guessed.

The joined track (UTF-8 SRT, :func:`extractors.srt.compose`): every entry of every part in part
order, with its timeframe and text as parsed. Indices: part 1's as found; each later part's
shifted by one constant (``index_shift``) so that they continue after the previous part's
highest index (no shift when they already do). Nothing within a part is renumbered — repeated or
gapped indices of a part stay as they are (and are flagged as for any file). The pipeline stores
entries keyed by their 0-based ``position`` in the joined file, with ``index`` as found in it, so
the provenance (:attr:`JoinedTrack.provenance`: per part its number, file id, name, raw sha256,
encoding, entry count, original first/last index, the shift, the first position and the first /
last times) maps every entry back to (part, original index): the part is the one whose
``first_position`` range holds the entry, the original index is ``index - index_shift``.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

#: reason code of a multi-part upload that is not joined
MULTI_PART = "multi_part"

#: most parts a candidate may hold (the real captures hold 2 or 4)
MAX_PARTS = 16

#: language names and ISO 639-2 codes as they appear in file names, by ISO 639-1 code
LANGUAGE_WORDS: dict[str, tuple[str, ...]] = {
    "en": ("english", "eng"), "de": ("german", "deutsch", "ger", "deu"), "fr": ("french", "francais", "fre", "fra"),
    "es": ("spanish", "espanol", "spa"), "it": ("italian", "italiano", "ita"), "pt": ("portuguese", "por"),
    "nl": ("dutch", "nederlands", "dut", "nld"), "sv": ("swedish", "swe"), "da": ("danish", "dan"),
    "no": ("norwegian", "nor"), "fi": ("finnish", "fin"), "pl": ("polish", "pol"), "cs": ("czech", "cze", "ces"),
    "hu": ("hungarian", "hun"), "ro": ("romanian", "rum", "ron"), "ru": ("russian", "rus"), "el": ("greek", "gre", "ell"),
    "tr": ("turkish", "tur"), "ar": ("arabic", "ara"), "fa": ("farsi", "persian", "per", "fas"),
    "he": ("hebrew", "heb"), "id": ("indonesian", "ind"), "vi": ("vietnamese", "vie"), "zh": ("chinese", "chi", "zho"),
    "ja": ("japanese", "jpn"), "ko": ("korean", "kor"), "hr": ("croatian", "hrv"), "sr": ("serbian", "srp"),
    "bg": ("bulgarian", "bul"), "sl": ("slovenian", "slv"), "sk": ("slovak", "slk"),
}
_BONUS = re.compile(r"(?<![a-z])(trailer|teaser|featurette|documentary|commentary|making[ ._-]?of|behind[ ._-]the"
                    r"[ ._-]scenes|deleted[ ._-]scenes|extras|bonus)(?![a-z])", re.I)
#: a part number in a member name: CD1, cd.2, disc 1, part2, pt1, 1of2
_PART_IN_NAME = re.compile(r"(?<![a-z])(?:cd|dis[ck]|part|pt)[ ._-]*0*([1-9]\d?)(?!\d)|(?<!\d)([1-9])[ ._-]*of[ ._-]*\d(?!\d)",
                           re.I)


class NotJoinable(Exception):
    """A multi-part upload whose parts are not joined; ``str(exc)`` says why."""


@dataclass(frozen=True)
class Part:
    number: int  # cd_number, 1..n
    file_id: str
    name: str | None = None


@dataclass
class JoinedTrack:
    data: bytes  # UTF-8 SRT of every part, in part order
    provenance: dict[str, Any] = field(default_factory=dict)


# --------------------------------------------------------------------------------------------
# before the download: the parts an upload holds
# --------------------------------------------------------------------------------------------
def plan_parts(files: Any, nb_cd: Any, language: str) -> list[Part]:
    """The parts of an OpenSubtitles item (``attributes.files``, ``attributes.nb_cd``) ordered by
    ``cd_number``; :class:`NotJoinable` when the metadata alone shows they cannot be one track."""
    if not isinstance(files, list) or len(files) < 2:
        raise NotJoinable("not a multi-file item")
    if len(files) > MAX_PARTS:
        raise NotJoinable(f"{len(files)} files (at most {MAX_PARTS} parts are joined)")
    parts: list[Part] = []
    for f in files:
        fid = f.get("file_id") if isinstance(f, dict) else None
        cd = f.get("cd_number") if isinstance(f, dict) else None
        if isinstance(fid, bool) or not isinstance(fid, (int, str)) or not str(fid).isdigit():
            raise NotJoinable(f"a file entry without a numeric file_id: {f!r:.120}")
        if isinstance(cd, bool) or not isinstance(cd, int):
            raise NotJoinable(f"file {fid}: cd_number {cd!r} is not a number")
        name = f.get("file_name")
        parts.append(Part(cd, str(int(fid)), name if isinstance(name, str) else None))
    parts.sort(key=lambda p: p.number)
    numbers = [p.number for p in parts]
    if numbers != list(range(1, len(parts) + 1)):
        raise NotJoinable(f"cd_number values {numbers} are not 1..{len(parts)}")
    if len({p.file_id for p in parts}) != len(parts):
        raise NotJoinable("the same file_id twice")
    if isinstance(nb_cd, int) and not isinstance(nb_cd, bool) and nb_cd != len(parts):
        raise NotJoinable(f"nb_cd = {nb_cd} but {len(parts)} files")
    for p in parts:
        problem = name_problem(p.name, language)
        if problem:
            raise NotJoinable(f"part {p.number} ({p.file_id}, {p.name!r}) {problem}")
    return parts


def name_problem(name: str | None, language: str) -> str | None:
    """Why a part's file name shows it is not a part of the film's track in ``language`` (another
    language named, or bonus material), else None."""
    if not name:
        return None
    own = language.split("-")[0].lower()
    lower = name.lower()
    for code, words in LANGUAGE_WORDS.items():
        if code == own:
            continue
        for w in words:
            # names in any case; three-letter codes only as upper-case tokens ("CD1 ENG"), since
            # lower-case ones are everyday words ("nor", "per", "dan")
            hit = (re.search(rf"(?<![a-z]){w}(?![a-z])", lower) if len(w) > 3
                   else re.search(rf"(?<![A-Za-z]){w.upper()}(?![A-Za-z])", name))
            if hit:
                return f"names another language ({w})"
    m = _BONUS.search(name)
    if m:
        return f"looks like bonus material ({m.group(1).lower()})"
    return None


def part_number(name: str) -> int | None:
    """The part number a member name states (CD1, cd.2, disc 1, part2, pt1, 1of2), else None."""
    stem = name.rsplit("/", 1)[-1]
    m = _PART_IN_NAME.search(stem)
    if not m:
        return None
    return int(m.group(1) or m.group(2))


def parts_of_members(names: list[str]) -> list[tuple[int, str]] | None:
    """For the SRT members of an archive: ``[(part number, name)]`` ordered by part number when
    there are several members that all state a part number (a CD1/CD2 archive), else None. Several
    members with the same number, or numbers that are not 1..n, raise :class:`NotJoinable`."""
    if len(names) < 2:
        return None
    numbered = [(part_number(n), n) for n in names]
    if not any(k is not None for k, _ in numbered):
        return None
    if any(k is None for k, _ in numbered):
        raise NotJoinable(f"only some members state a part number: {sorted(names)[:6]}")
    numbered.sort()
    numbers = [k for k, _ in numbered]
    if numbers != list(range(1, len(numbered) + 1)):
        raise NotJoinable(f"member part numbers {numbers} are not 1..{len(numbered)}")
    return [(int(k), n) for k, n in numbered]  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------
# after the download: the join rule
# --------------------------------------------------------------------------------------------
def join_parts(parts: list[tuple[Part, bytes]], language: str) -> JoinedTrack:
    """One track of the downloaded parts (in part order), or :class:`NotJoinable` (see the module)."""
    import polars as pl

    from extractors.srt import compose
    from validators.candidate import decode_and_parse
    from validators.language import language_share

    if len(parts) < 2:
        raise NotJoinable("fewer than two parts")
    parts = sorted(parts, key=lambda pd: pd[0].number)
    want = language.split("-")[0].lower()
    rows: list[dict[str, Any]] = []
    prov: list[dict[str, Any]] = []
    prev_end: int | None = None
    top_index: int | None = None
    for part, raw in parts:
        run = decode_and_parse(raw, language)
        label = f"part {part.number} ({part.file_id})"
        if run.stopped or run.table.num_rows == 0:
            raise NotJoinable(f"{label} does not parse ({', '.join(run.layers) or 'no entries'})")
        entries = pl.from_arrow(run.table)
        assert isinstance(entries, pl.DataFrame)
        detected = language_share(entries, language).get("detected")
        if not detected or str(detected).split("-")[0].lower() != want:
            raise NotJoinable(f"{label} reads as {detected or 'no language'}, not {language}")
        first_start, last_end = int(entries["start_ms"].min()), int(entries["end_ms"].max())
        if prev_end is not None and first_start < prev_end:
            raise NotJoinable(
                f"{label} starts at {_ts(first_start)}, before part {part.number - 1} ends at {_ts(prev_end)}: "
                "its timestamps restart (an offset nobody knows for certain)")
        indices = entries["index"]
        lo, hi = int(indices.min()), int(indices.max())
        shift = 0 if top_index is None or lo > top_index else top_index - lo + 1
        prov.append({
            "part": part.number, "file_id": part.file_id, "file_name": part.name,
            "sha256": hashlib.sha256(raw).hexdigest(), "bytes": len(raw), "encoding": run.decoded.encoding,
            "entries": entries.height, "first_index": lo, "last_index": hi, "index_shift": shift,
            "first_position": len(rows), "first_start_ms": first_start, "last_end_ms": last_end,
        })
        for index, timeframe, content in entries.select("index", "timeframe", "content").iter_rows():
            rows.append({"index": int(index) + shift, "timeframe": timeframe, "content": content})
        prev_end = last_end
        top_index = hi + shift
    data = compose(rows).encode("utf-8")
    return JoinedTrack(data, {
        "rule": "absolute_offsets", "parts": prov, "entries": len(rows),
        "sha256": hashlib.sha256(data).hexdigest(),
    })


def _ts(ms: int) -> str:
    h, rest = divmod(ms, 3_600_000)
    m, rest = divmod(rest, 60_000)
    return f"{h:02d}:{m:02d}:{rest // 1000:02d},{rest % 1000:03d}"
