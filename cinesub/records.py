"""The record schemas used everywhere: pydantic models for rows and Arrow schemas for tables.

One place defines every record that crosses a module boundary. Extractors return these
records, validators take and return these (or polars frames with the Arrow schema below), flows
write them to the state database (whose DDL in ``sql/state_schema.sql`` mirrors them).
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Any, Literal

import pyarrow as pa
from pydantic import BaseModel, Field

IMDB_ID_RE = re.compile(r"^tt\d{7,8}$")

Severity = Literal["stop", "review"]
TrackStatus = Literal["ok", "flagged", "rejected"]

#: the layers :func:`validators.checks.run_checks` raises, in report order
CHECK_LAYERS: tuple[str, ...] = (
    "index_duplicate",
    "chronology",
    "block_lifespan",
    "delayed_onset",
    "runtime_coverage",
    "macro_interval",
    "language_mismatch",
)
#: Verification layers (SPEC A5) and duration-audit layers: the reason-code vocabulary of flags.
LAYERS: tuple[str, ...] = (
    "provider_body",
    "timestamp_syntax",
    "structure",
    "encoding",
    *CHECK_LAYERS,
    "span_ratio",
    "token_ratio",
    "entry_ratio",
    "span_vs_english",
)


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


# --------------------------------------------------------------------------------------------
# Inventory (SPEC A1)
# --------------------------------------------------------------------------------------------
class LanguageContentReference(BaseModel):
    rating: int | None = None
    summary: str | None = None
    source: str | None = None


class KimRecord(BaseModel):
    """One Kids-in-Mind review page."""

    kim_id: str
    url: str
    title: str
    year: int | None = None
    imdb_link: str | None = None  # the link as printed on the page (may be absent or malformed)
    key_message: str | None = None
    language_content: LanguageContentReference = LanguageContentReference()
    #: KIM prose counts per language-safety category when parseable (SPEC A9 reference)
    raw_sha256: str | None = None


class CsmRecord(BaseModel):
    """One Common Sense Media review page."""

    csm_id: str
    url: str
    title: str
    year: int | None = None
    imdb_link: str | None = None
    age_suitability: str | None = None  # "13+"
    storyline: str | None = None
    raw_sha256: str | None = None


class CastMember(BaseModel):
    actor: str
    characters: list[str] = Field(default_factory=list)
    additional_texts: list[str] = Field(default_factory=list)


class ImdbRecord(BaseModel):
    """IMDb datasets (basics, ratings, crew, principals, name.basics) joined with the title pages."""

    imdb_id: str
    title: str
    original_title: str | None = None  # title.basics originalTitle
    year: int | None = None
    runtime_min: int | None = None
    rating: float | None = None
    votes: int | None = None  # title.ratings numVotes
    genres: list[str] = Field(default_factory=list)
    countries: list[str] = Field(default_factory=list)
    languages: list[str] = Field(default_factory=list)
    topics: list[str] = Field(default_factory=list)
    plot: str | None = None
    synopsis: str | None = None
    certificates: list[str] = Field(default_factory=list)  # raw "Country:Label" strings
    directors: list[str] = Field(default_factory=list)
    writers: list[str] = Field(default_factory=list)
    cast: list[CastMember] = Field(default_factory=list)
    raw_sha256: str | None = None


# --------------------------------------------------------------------------------------------
# Acquisition (SPEC A2)
# --------------------------------------------------------------------------------------------
class Candidate(BaseModel):
    """A subtitle file a provider offers for one film and language."""

    imdb_id: str
    language: str
    provider: str  # "local" | "opensubtitles" | "subdl"
    file_id: str
    download_count: int = 0
    uploader: str | None = None
    release: str | None = None
    fps: float | None = None
    hearing_impaired: bool = False
    machine_translated: bool = False
    ai_translated: bool = False
    upload_date: str | None = None
    feature_imdb_id: str | None = None
    url: str | None = None


class Provenance(BaseModel):
    """Where raw bytes came from (kept beside the content-addressed blob)."""

    sha256: str
    size: int
    provider: str
    file_id: str | None = None
    url: str | None = None
    language: str | None = None
    imdb_id: str | None = None
    download_count: int | None = None
    fetched_at: datetime = Field(default_factory=utcnow)


# --------------------------------------------------------------------------------------------
# Processing (SPEC A3-A6)
# --------------------------------------------------------------------------------------------
class Flag(BaseModel):
    """One raised verification flag. Flags never delete: they open review, recovery or a stop."""

    layer: str
    severity: Severity
    detail: str
    value: float | None = None
    threshold: float | None = None
    evidence: dict[str, Any] = Field(default_factory=dict)


class Entry(BaseModel):
    index: int
    timeframe: str
    start_ms: int
    end_ms: int
    content: str


class ParseError(BaseModel):
    line: int
    text: str
    layer: str  # "timestamp_syntax" | "structure"
    detail: str


class Repair(BaseModel):
    line: int
    before: str
    after: str
    kind: str = "ms_separator"


class DecodeResult(BaseModel):
    text: str | None
    encoding: str | None
    decoder: str  # how the encoding was chosen, e.g. "bom", "candidate:cp1256", "paper:utf-16"
    status: TrackStatus
    reasons: list[str] = Field(default_factory=list)
    flags: list[Flag] = Field(default_factory=list)


class ParseResult(BaseModel):
    status: TrackStatus
    entries: list[Entry] = Field(default_factory=list)
    repairs: list[Repair] = Field(default_factory=list)
    errors: list[ParseError] = Field(default_factory=list)


# --------------------------------------------------------------------------------------------
# Arrow schemas of the large tables (entries, flags, sanitization log) — also the Parquet
# schemas of the release.
# --------------------------------------------------------------------------------------------
#: the entries of one parsed track (:func:`extractors.srt.parse_to_arrow`)
PARSED_ENTRY_SCHEMA = pa.schema(
    [
        ("index", pa.int64()),
        ("timeframe", pa.string()),
        ("start_ms", pa.int64()),
        ("end_ms", pa.int64()),
        ("content", pa.string()),
    ]
)
ENTRIES_SCHEMA = pa.schema([("track_id", pa.string()), *PARSED_ENTRY_SCHEMA])

FLAGS_SCHEMA = pa.schema(
    [
        ("track_id", pa.string()),
        ("imdb_id", pa.string()),
        ("language", pa.string()),
        ("provider", pa.string()),
        ("file_id", pa.string()),
        ("layer", pa.string()),
        ("severity", pa.string()),
        ("value", pa.float64()),
        ("threshold", pa.float64()),
        ("detail", pa.string()),
        ("evidence", pa.string()),  # JSON
    ]
)

SANITIZATION_SCHEMA = pa.schema(
    [
        ("track_id", pa.string()),
        ("imdb_id", pa.string()),
        ("language", pa.string()),
        ("index", pa.int64()),
        ("action", pa.string()),  # removed | modified
        ("reasons", pa.string()),  # comma-separated reason codes
        ("sha256", pa.string()),  # hash of the removed (or replaced) text, never the text
    ]
)
