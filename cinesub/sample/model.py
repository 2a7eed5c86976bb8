"""The in-memory plan of one sample-world film (rendered into pages, datasets and tracks)."""

from __future__ import annotations

from dataclasses import dataclass, field

from cinesub.sample.tracks import Unit


@dataclass
class CastEntry:
    actor: str
    characters: list[str]
    additional: list[str] = field(default_factory=list)


@dataclass
class Film:
    idx: int
    title: str
    year: int
    release_date: str  # ISO date
    runtime_min: int
    imdb_id: str  # the film's true IMDb id
    level: int  # content severity 0..4
    kim_id: str
    kim_url: str
    kim_link: str | None  # the IMDb link as printed on the KIM page
    csm_id: str | None
    csm_url: str | None
    csm_link: str | None  # the IMDb link embedded in the CSM page
    genres: list[str]
    countries: list[str]
    languages: list[str]
    directors: list[str]
    writers: list[str]
    cast: list[CastEntry]
    keywords: list[str]
    summaries: list[tuple[str, str]]  # (text, author)
    synopsis: str | None
    description: str | None
    certificates: list[str]
    cert_style: str  # "inline" (Country:Label anchors) | "modern" (labelled list items)
    ratings: list[dict]  # primary entry per country: {country, raw, label}
    imdb_rating: float
    votes: int
    mpaa: str
    kim_scores: dict[str, int]
    kim_counts: dict[str, int]  # counts printed in the KIM LANGUAGE prose
    true_counts: dict[str, int]  # occurrences planted in the dialogue (English)
    kim_message: str
    kim_texts: dict[str, str]
    csm_age: str
    csm_one_liner: str
    csm_parents: str
    storyline: str
    n_entries: int
    dialogue: list[Unit] = field(default_factory=list)
    expected_drop_gate: str | None = None
    expected_drop_reason: str | None = None
    expected_drop_detail: str | None = None
    has_subtitles: bool = True
    planted_external: str | None = None  # SPEC A10 sentence appended to the synopsis
    missing_language: str | None = None
    unusable_language: str | None = None
