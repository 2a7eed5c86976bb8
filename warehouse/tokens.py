"""Input-length token counts of subtitle tracks with tiktoken, offline (SPEC A11, paper Table 9).

The paper counts "prompt-formatted subtitle inputs" with the ``o200k_base`` encoding. What is
counted here, per track, is the track exactly as a film entity carries it in ``films.jsonl``: the
JSON array of its entries in release order (``start_ms``, then ``index``), each
``{"index": …, "timeframe": …, "content": …}``, written by ``json.dumps(…, ensure_ascii=False)``
with its default separators (``", "`` and ``": "``) — the same bytes warehouse/release.py writes
for ``subtitles[].entries``. No instruction text, language label or chat template is added: the
count is the subtitle payload a prompt embeds, independent of any one model's prompt wrapper.

Offline: tiktoken downloads its BPE tables on first use from a host this project cannot reach.
``scripts/provision_tokenizer.py`` (run by ``make setup``) puts the table into
``<sys.prefix>/share/cinesub/tiktoken`` under tiktoken's cache key (sha1 of the blob URL). Before
tiktoken is asked for an encoding, the cache file is checked to exist and to carry the sha256
tiktoken expects (tiktoken deletes a mismatching cache file and fetches again); otherwise
:class:`TokenizerUnavailable` says to run ``make setup`` — a network fetch is never attempted.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa

#: Default encoding: the one the paper used for input-length accounting.
DEFAULT_ENCODING = "o200k_base"

_BLOB_HOST = "https://openaipublic.blob.core.windows.net/encodings"
#: tiktoken's own (blob URL, sha256) for the single-file encodings (tiktoken_ext.openai_public).
ENCODING_BLOBS: dict[str, tuple[str, str]] = {
    "o200k_base": (f"{_BLOB_HOST}/o200k_base.tiktoken",
                   "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"),
    "cl100k_base": (f"{_BLOB_HOST}/cl100k_base.tiktoken",
                    "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"),
    "p50k_base": (f"{_BLOB_HOST}/p50k_base.tiktoken",
                  "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069"),
    "r50k_base": (f"{_BLOB_HOST}/r50k_base.tiktoken",
                  "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930"),
}

#: Tracks tokenised per batch (bounds memory: a feature film's track is ~150 kB of JSON).
BATCH_TRACKS = 256
#: Columns :func:`count_track_tokens` reads.
ENTRY_COLUMNS = ("track_id", "index", "timeframe", "content", "start_ms")


class TokenizerUnavailable(RuntimeError):
    """The BPE table of an encoding is not available offline."""


def provisioned_cache_dir() -> Path:
    """Where ``scripts/provision_tokenizer.py`` puts tiktoken's tables."""
    return Path(sys.prefix) / "share" / "cinesub" / "tiktoken"


def cache_key(encoding: str) -> str:
    """tiktoken's cache file name for an encoding: sha1 of its blob URL."""
    return hashlib.sha1(ENCODING_BLOBS[encoding][0].encode()).hexdigest()


def _check_offline(encoding: str) -> Path:
    if encoding not in ENCODING_BLOBS:
        raise TokenizerUnavailable(
            f"tokenizer {encoding!r} is not supported offline (known: {', '.join(sorted(ENCODING_BLOBS))})")
    os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(provisioned_cache_dir()))
    cache_dir = os.environ["TIKTOKEN_CACHE_DIR"]
    if not cache_dir:
        raise TokenizerUnavailable(
            f"TIKTOKEN_CACHE_DIR is empty (caching disabled), so tiktoken would download {encoding}; "
            "unset it and run `make setup`")
    path = Path(cache_dir) / cache_key(encoding)
    if not path.is_file():
        raise TokenizerUnavailable(
            f"tokenizer {encoding} is not provisioned: {path} is missing; run `make setup` "
            "(scripts/provision_tokenizer.py) to install it for offline use")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != ENCODING_BLOBS[encoding][1]:
        raise TokenizerUnavailable(
            f"tokenizer {encoding} at {path} has sha256 {digest}, not the one tiktoken expects; "
            "remove it and run `make setup`")
    return path


@functools.lru_cache(maxsize=None)
def load_encoding(encoding: str = DEFAULT_ENCODING) -> Any:
    """The tiktoken ``Encoding`` named ``encoding``, loaded from the offline cache only."""
    _check_offline(encoding)
    import tiktoken

    return tiktoken.get_encoding(encoding)


def format_track(entries: Iterable[dict[str, Any]]) -> str:
    """The prompt-formatted text of one track: its entries as the film entity's JSON array."""
    return json.dumps([{"index": e["index"], "timeframe": e["timeframe"], "content": e["content"]}
                       for e in entries], ensure_ascii=False)


def count_texts(texts: Sequence[str], *, encoding: str = DEFAULT_ENCODING,
                num_threads: int | None = None) -> list[int]:
    """Token counts of ``texts`` (ordinary encoding: special-token text counts as plain text)."""
    enc = load_encoding(encoding)
    threads = num_threads or max(1, min(8, os.cpu_count() or 1))
    return [len(ids) for ids in enc.encode_ordinary_batch(list(texts), num_threads=threads)]


def text_sha256(text: str) -> str:
    """The key of a counted text in ``known`` counts (the state DB's ``token_counts``)."""
    return hashlib.sha256(text.encode()).hexdigest()


def count_track_tokens(entries_table: pa.Table | pl.DataFrame, *, encoding: str = DEFAULT_ENCODING,
                       num_threads: int | None = None, known: Mapping[str, int] | None = None,
                       texts: Mapping[str, str] | None = None) -> pl.DataFrame:
    """``(track_id, input_tokens)`` for every track in an entries table, sorted by track_id.

    ``entries_table`` has at least the columns of :data:`ENTRY_COLUMNS` (the release's
    ``entries`` table). Each track is formatted by :func:`format_track` in release order.
    ``known``: token counts already made of texts in this ``encoding``, by the sha256 of the text
    (the state DB's ``token_counts``, which the cohort stage fills): a track whose text is there
    is not tokenised again, and the encoding is loaded only when one is not. ``texts``: the sha256
    of tracks' texts already formatted elsewhere (track_id → :func:`text_sha256` of
    :func:`format_track` of its entries in release order: the film entities' ``entries`` arrays,
    warehouse/entities.py): a track found there whose count is ``known`` is not formatted again.
    """
    names = entries_table.columns if isinstance(entries_table, pl.DataFrame) else entries_table.column_names
    missing = [c for c in ENTRY_COLUMNS if c not in names]
    if missing:
        raise ValueError(f"entries table lacks columns {missing}")
    if known is None:
        load_encoding(encoding)  # fail fast, before any formatting work
    known = known or {}
    counts: dict[str, int] = {}
    all_ids: list[str] | None = None
    if texts and known and not isinstance(entries_table, pl.DataFrame) and not entries_table.column("track_id").null_count:
        # the track ids alone first: only the rows of tracks still to count become a DataFrame
        import pyarrow.compute as pc

        ids_col = entries_table.column("track_id")
        all_ids = sorted(t for t in pc.unique(ids_col).to_pylist())
        counts = {t: int(known[texts[t]]) for t in all_ids if t in texts and texts[t] in known}
        if counts:
            entries_table = entries_table.filter(pc.invert(pc.is_in(ids_col, value_set=pa.array(list(counts),
                                                                                           ids_col.type))))
    df = entries_table if isinstance(entries_table, pl.DataFrame) else pl.from_arrow(
        entries_table.select(list(ENTRY_COLUMNS)))
    assert isinstance(df, pl.DataFrame)
    df = df.select(ENTRY_COLUMNS)
    if texts and known and all_ids is None:
        all_ids = df["track_id"].unique().sort().to_list()
        counts = {t: int(known[texts[t]]) for t in all_ids if t in texts and texts[t] in known}
        if counts:  # only the tracks still to count are sorted and formatted
            df = df.filter(~pl.col("track_id").is_in(list(counts)))
    df = df.sort(["track_id", "start_ms", "index"], maintain_order=True)
    batch_ids: list[str] = []
    batch_texts: list[str] = []

    def flush() -> None:
        counts.update(zip(batch_ids, count_texts(batch_texts, encoding=encoding, num_threads=num_threads)))
        batch_ids.clear()
        batch_texts.clear()

    ids: list[str] = []
    for part in df.partition_by("track_id", maintain_order=True):
        tid = part["track_id"][0]
        ids.append(tid)
        text = json.dumps(
            [{"index": i, "timeframe": t, "content": c}
             for i, t, c in zip(part["index"].to_list(), part["timeframe"].to_list(), part["content"].to_list())],
            ensure_ascii=False)
        hit = known.get(text_sha256(text)) if known else None
        if hit is not None:
            counts[tid] = int(hit)
            continue
        batch_ids.append(tid)
        batch_texts.append(text)
        if len(batch_texts) >= BATCH_TRACKS:
            flush()
    if batch_texts:
        flush()
    if all_ids is not None:
        ids = all_ids
    return pl.DataFrame({"track_id": ids, "input_tokens": [counts[t] for t in ids]},
                        schema={"track_id": pl.Utf8, "input_tokens": pl.Int64})
