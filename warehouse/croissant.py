"""Croissant 1.0 (+ RAI 1.0) JSON-LD metadata for a cinesub release (SPEC A11, C).

What: ``build_croissant`` describes a release directory as a Croissant dataset — one
``cr:FileObject`` per Parquet table and per ``films.jsonl`` (relative ``contentUrl``, sha256
taken from the release manifest), one ``cr:RecordSet`` per Parquet table with a ``cr:Field`` per
column (data type mapped from the Arrow schema, ``extract.column`` source; a list column is a
``repeated`` field of its item type, a struct column — or a list of structs, such as
``task_references.full_cast`` — has one ``subField`` per struct member, read with a
``transform.jsonPath``) and record keys, plus
the responsible-AI (``rai:``) properties. ``write_croissant`` writes it as ``croissant.json``.

Why: Croissant is the metadata format that dataset hubs and loaders (mlcroissant, Hugging Face,
Kaggle, OpenML) read; the RAI vocabulary states how the data was collected and cleaned, what it
can and cannot be used for, and how releases are maintained (versioning, withdrawal, SPEC C).

The output is a pure function of its inputs — no clock, no host names — and every list whose
order carries no meaning is sorted, so identical releases give identical bytes.

This module does not import mlcroissant (a dev dependency); the tests validate its output with it.
"""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path
from typing import Any, Mapping

import pyarrow as pa

CROISSANT_CONFORMS_TO = "http://mlcommons.org/croissant/1.0"
#: RAI conformance; mlcroissant validates against the first CroissantVersion in the list and
#: accepts (ignores) this one.
RAI_CONFORMS_TO = "http://mlcommons.org/croissant/RAI/1.0"

#: The standard Croissant 1.0 JSON-LD context (as in the spec's examples), with ``rai`` and ``dct``
#: (package data: warehouse/croissant_context.json, key order kept).
CROISSANT_CONTEXT: dict[str, Any] = json.loads(
    resources.files("warehouse").joinpath("croissant_context.json").read_text(encoding="utf-8"))

ENCODING_FORMATS: dict[str, str] = {
    ".parquet": "application/x-parquet",
    ".jsonl": "application/jsonlines",
    ".json": "application/json",
}

#: Record keys per table (SPEC A11: films by IMDb id, tracks by track id, entries by track+index).
TABLE_KEYS: dict[str, tuple[str, ...]] = {
    "films": ("imdb_id",),
    "tracks": ("track_id",),
    "entries": ("track_id", "index"),
    "task_references": ("imdb_id",),
}

#: Licence ids (SPDX / Hugging Face, lower case) → canonical URLs; Croissant recommends a URL.
LICENSE_URLS: dict[str, str] = {
    "cc-by-4.0": "https://creativecommons.org/licenses/by/4.0/",
    "cc-by-sa-4.0": "https://creativecommons.org/licenses/by-sa/4.0/",
    "cc-by-nc-4.0": "https://creativecommons.org/licenses/by-nc/4.0/",
    "cc-by-nc-sa-4.0": "https://creativecommons.org/licenses/by-nc-sa/4.0/",
    "cc-by-nc-nd-4.0": "https://creativecommons.org/licenses/by-nc-nd/4.0/",
    "cc0-1.0": "https://creativecommons.org/publicdomain/zero/1.0/",
    "mit": "https://opensource.org/licenses/MIT",
    "apache-2.0": "https://www.apache.org/licenses/LICENSE-2.0",
    "odc-by": "https://opendatacommons.org/licenses/by/1-0/",
}

TABLE_DESCRIPTIONS: dict[str, str] = {
    "films": "One row per released film: stable sequential id, IMDb title id, title, year, runtime, "
             "IMDb rating, age suitability and review-site links.",
    "ratings": "National motion-picture ratings, ten rows per film in the defined country order, "
               "normalised to a minimum age and an ordinal (SPEC A8).",
    "tracks": "One subtitle track per film and language with provenance (provider, file id, raw "
              "sha256), decoding, parse status and size statistics.",
    "entries": "Subtitle entries (cues) of every track: index, SRT time frame, start/end in "
               "milliseconds and the sanitized text.",
    "language_safety": "Language-safety gold derived from the English track: per film and category, "
                       "occurrence and evidence-line counts and the evidence entry indices (SPEC A9).",
    "funnel": "Corpus funnel: films kept and dropped at each gate, with reason codes.",
    "coverage": "Complete-coverage optimisation results per dimension (SPEC A7).",
    "selection": "The subtitle languages and rating countries the build chose (availability survey and "
                 "exact complete-coverage search, SPEC A7), in release order, with the mode that chose them.",
    "selection_per_k": "The build's selection per K and dimension over the availability survey: the exact "
                       "search optimum beside the frequency-prefix baseline (SPEC A7).",
    "flags": "Verification flags raised on tracks (layer, severity, value, threshold, evidence).",
    "sanitization_log": "Audit log of every sanitization action (e.g. e-mail redaction) with the "
                        "reason codes and the sha256 of the original text.",
    "task_references": "Task references (benchmark targets), one row per released film: cleaned plot, "
                       "synopsis and storyline, key message, genres, topics, age suitability, full cast, "
                       "countries of origin and original languages — the values of films.jsonl; a task "
                       "field the completeness rule withheld is null for every film.",
    "raw_genres": "Every raw genre of a released film as its source gave it (IMDb, CSM), beside the core "
                  "genres it maps to under the versioned genre mapping (seed 000's 22 core labels): "
                  "mapped, outside_core or unmapped (queued for curator review, never guessed).",
    "stages": "Per-stage statistics of the build that made this release (stats/stages.parquet): flow, stage, "
              "status, items in and out, items dropped by reason and seconds. Not data: it never decides "
              "whether a release is new.",
}

COLUMN_DESCRIPTIONS: dict[str, str] = {
    "id": "Sequential, stable film id (SPEC A11 `id`).",
    "imdb_id": "IMDb title id (tt…), the cross-source key of a film.",
    "title": "Film title.",
    "year": "Release year.",
    "runtime_min": "Runtime in minutes.",
    "imdb_rating": "IMDb user rating (0–10).",
    "age_suitability": "Common Sense Media age suitability (e.g. '13+').",
    "kim_url": "Kids-In-Mind review URL.",
    "csm_url": "Common Sense Media review URL.",
    "split": "Release split: 'public' (stratified public sample) or 'heldback'.",
    "stratum": "Stratum of the split draw (e.g. decade × age suitability).",
    "primary_genre": "First listed genre.",
    "raw_genre": "Genre string exactly as the source gave it.",
    "core_genres": "Core genres (seed 000's 22-label space) the raw genre maps to; empty unless mapped.",
    "mapping_version": "Version of the raw → core genre mapping (validators/data/genre_map_v*.json).",
    "genres": "Genres.",
    "country": "Rating country.",
    "label": "Rating label as issued in that country.",
    "minimum_age": "Minimum age implied by the label.",
    "ordinal": "Ordinal of the label on the country's scale.",
    "raw": "Rating text as found in the source.",
    "rule": "Normalisation rule applied.",
    "track_id": "Subtitle track id.",
    "language": "ISO 639-1 language code of the subtitle track.",
    "provider": "Subtitle provider (OpenSubtitles, SubDL).",
    "file_id": "Provider file id.",
    "raw_sha256": "sha256 of the downloaded raw subtitle file.",
    "download_count": "Provider download count of the file.",
    "encoding": "Detected source text encoding.",
    "decoder": "Decoder that produced the text.",
    "status": "Ingestion status of the track.",
    "n_entries": "Number of subtitle entries.",
    "n_repairs": "Number of structural repairs made while parsing.",
    "first_start_ms": "Start of the first entry (ms).",
    "last_end_ms": "End of the last entry (ms).",
    "n_tokens": "Whitespace tokens in the track.",
    "index": "Entry index within the track (SRT counter).",
    "timeframe": "SRT time frame, e.g. '00:01:02,500 --> 00:01:04,000'.",
    "start_ms": "Entry start (ms).",
    "end_ms": "Entry end (ms).",
    "content": "Entry text after sanitization.",
    "category": "Language-safety category.",
    "occurrence_count": "Occurrences of the category in the English track.",
    "evidence_line_count": "English entries containing an occurrence.",
    "evidence_indices": "JSON list of English entry indices holding the evidence.",
    "gate_no": "Gate number in the funnel.",
    "gate": "Gate name.",
    "kept": "Films kept after the gate.",
    "dropped": "Films dropped at the gate.",
    "reasons": "JSON object / list of reason codes.",
    "dimension": "Coverage dimension.",
    "k": "Coverage parameter k.",
    "method": "Optimisation method.",
    "attributes": "Attributes covered.",
    "films": "Number of films.",
    "score": "Coverage score.",
    "layer": "Verification layer.",
    "severity": "Flag severity.",
    "value": "Measured value.",
    "threshold": "Threshold that raised the flag.",
    "detail": "Human-readable detail.",
    "evidence": "Evidence of the flag.",
    "action": "Sanitization action.",
    "sha256": "sha256 of the original (pre-sanitization) text.",
    "plot": "IMDb plot, cleaned of material external to the film (SPEC A10; entity `plot`).",
    "synopsis": "IMDb synopsis, cleaned (SPEC A10; entity `synopsis`).",
    "storyline": "Common Sense Media storyline, cleaned (SPEC A10; entity `storyline`).",
    "key_message": "Kids-In-Mind key message (entity `keyMessage`).",
    "topics": "IMDb topics / keywords (entity `topics`).",
    "full_cast": "Full cast in billing order: actor, characters, additional texts (entity `fullCast`).",
    "actor": "Actor name.",
    "characters": "Characters played.",
    "additional_texts": "Additional credit texts, e.g. '(voice)' (entity `additionalTexts`).",
    "countries_of_origin": "Countries of origin (entity `countriesOfOrigin`).",
    "original_languages": "Original languages (entity `originalLanguages`).",
}

VERSIONING_RULE = (
    "Releases are immutable and semantically versioned (MAJOR.MINOR.PATCH), each tied to a "
    "snapshot of its inputs recorded in manifest.json: patch = the same data repackaged, "
    "minor = data added only, major = data changed or removed. Unchanged data produces no new "
    "release."
)

WITHDRAWAL_POLICY = (
    "Withdrawal on request: a rights holder or data subject may ask for a film (or part of it) to "
    "be removed; the film is removed from every table and a new major release is issued within "
    "7 days. Earlier versions that contain it are withdrawn from distribution."
)

#: Default responsible-AI texts (RAI 1.0 property names without the ``rai:`` prefix). Callers
#: override any of them through ``build_croissant(..., rai=...)``. ``hasSyntheticData`` defaults
#: from the manifest (a release built from the synthetic sample world is synthetic).
DEFAULT_RAI: dict[str, Any] = {
    "dataCollection": (
        "Films are resolved across review sites (Kids-In-Mind, Common Sense Media) and IMDb by "
        "IMDb title id. Subtitle tracks in six languages (en, ar, id, fa, ro, vi) are downloaded "
        "from OpenSubtitles, with SubDL used for recovery; every download is recorded with its "
        "provider, file id and raw sha256. National motion-picture ratings and task references "
        "(plot, synopsis, storyline, key message, genres, age suitability) come from the same "
        "sources."
    ),
    "dataCollectionType": ["Web Scraping", "Secondary Data Analysis"],
    "dataCollectionMissingData": (
        "Films without a usable subtitle track in every selected language are dropped (see the "
        "funnel table for the gate and reason of each drop). Task fields that are missing for "
        "some films are set to null for the whole cohort."
    ),
    "dataPreprocessingProtocol": [
        "Subtitle files are decoded with detected encodings, parsed strictly as SRT (recorded "
        "repairs only) and verified in layers (structure, timing, language identification, "
        "duration and cross-track alignment); each failed rule raises a flag with a reason code.",
        "Sanitization removes personal contact data (e-mail addresses) and provider "
        "advertisements from subtitle text; every action is logged in the sanitization_log table.",
        "National ratings are normalised to a minimum age and an ordinal per country.",
    ],
    "dataAnnotationProtocol": [
        "Language-safety gold labels (strong profanity, crude bodily language, mild obscenity, "
        "religious profanity and exclamation) are derived automatically from the English track "
        "with a fixed lexicon; every count carries the indices of its evidence entries.",
        "Task references are curated from review-site text; flagged tracks are reviewed by "
        "curators whose decisions are recorded.",
    ],
    "personalSensitiveInformation": [
        "Subtitle text may contain names of fictional characters and cast; e-mail addresses and "
        "similar contact data found in subtitles are redacted during sanitization, and each "
        "redaction is recorded (with the sha256 of the original text, not the text) in the "
        "sanitization_log table.",
        "No information about subtitle uploaders or downloaders is released beyond aggregate "
        "download counts.",
    ],
    "dataBiases": [
        "The film selection follows review-site coverage (Kids-In-Mind, Common Sense Media), which "
        "favours recent, English-language, US-distributed films.",
        "Subtitle availability and quality differ by language; volunteer translations vary in "
        "register and may soften or intensify profanity.",
    ],
    "dataLimitations": [
        "Subtitles are community-made and may contain translation errors, timing drift or "
        "residual noise that automated verification did not flag.",
        "Language-safety labels are derived from the English track only and are lexicon-based.",
        "Ratings reflect the rating bodies at collection time and may change.",
    ],
    "dataUseCases": [
        "Benchmarking multilingual long-context understanding of films from subtitles: plot and "
        "synopsis generation (summarization), genre and age-suitability classification, and "
        "language-content assessment.",
        "Not intended for training systems that identify individuals, nor for redistributing "
        "subtitle text outside research use.",
    ],
    "dataSocialImpact": (
        "Supports research on multilingual media understanding and age-appropriateness assessment "
        "across cultures. Risks: subtitle text includes profanity and mature themes by design; "
        "automated content ratings must not replace human judgement for real audiences."
    ),
    "dataReleaseMaintenancePlan": VERSIONING_RULE + " " + WITHDRAWAL_POLICY + (
        " A stratified public sample (every stratum has public and held-back films; the share, the strata "
        "and the counts per stratum are in manifest.json `splits`; fixed seed, frozen) "
        "is released beside a held-back split."
    ),
}

#: RAI 1.0 properties with cardinality ONE (plain text); the others may be a list of texts.
_RAI_SINGLE = {
    "dataCollection", "dataCollectionMissingData", "dataCollectionRawData",
    "dataImputationProtocol", "dataManipulationProtocol", "annotationsPerItem",
    "dataSocialImpact", "dataReleaseMaintenancePlan",
}
_RAI_MANY = {
    "dataCollectionType", "dataCollectionTimeframe", "dataPreprocessingProtocol",
    "dataAnnotationProtocol", "dataAnnotationPlatform", "dataAnnotationAnalysis",
    "annotatorDemographics", "machineAnnotationTools", "dataBiases", "dataUseCases",
    "dataLimitations", "personalSensitiveInformation",
}
_RAI_BOOL = {"hasSyntheticData"}
RAI_PROPERTIES = frozenset(_RAI_SINGLE | _RAI_MANY | _RAI_BOOL)

_SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$")


class CroissantError(ValueError):
    """Invalid input to the Croissant builder; ``reason`` is a stable reason code."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(f"{reason}: {message}")
        self.reason = reason


def arrow_to_croissant_type(arrow_type: pa.DataType) -> str:
    """Map an Arrow type to a Croissant (schema.org) data type; anything else is text."""
    if pa.types.is_boolean(arrow_type):
        return "sc:Boolean"
    if pa.types.is_integer(arrow_type):
        return "sc:Integer"
    if pa.types.is_floating(arrow_type) or pa.types.is_decimal(arrow_type):
        return "sc:Float"
    if pa.types.is_date(arrow_type):
        return "sc:Date"
    if pa.types.is_timestamp(arrow_type):
        return "sc:DateTime"
    if pa.types.is_dictionary(arrow_type):
        return arrow_to_croissant_type(arrow_type.value_type)
    return "sc:Text"


def _list_item(arrow_type: pa.DataType) -> pa.DataType | None:
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type) or pa.types.is_fixed_size_list(arrow_type):
        return arrow_type.value_type
    return None


def _field(record_set: str, parent: str, name: str, arrow_type: pa.DataType, file_id: str, column: str,
           json_path: str | None) -> dict[str, Any]:
    """A ``cr:Field`` for one column (``json_path`` None) or one struct member of ``column``."""
    item = _list_item(arrow_type)
    base = item if item is not None else arrow_type
    source: dict[str, Any] = {"fileObject": {"@id": file_id}, "extract": {"column": column}}
    if json_path is not None:
        source["transform"] = {"jsonPath": json_path}
    field: dict[str, Any] = {
        "@type": "cr:Field",
        "@id": f"{parent}/{name}",
        "name": name,
        "description": COLUMN_DESCRIPTIONS.get(name, f"Column `{name}`."),
    }
    if not pa.types.is_struct(base):
        field["dataType"] = arrow_to_croissant_type(base)
    if item is not None:
        field["repeated"] = True
    field["source"] = source
    if pa.types.is_struct(base) and json_path is None:
        field["subField"] = [
            _field(record_set, f"{parent}/{name}", member.name, member.type, file_id, column, member.name)
            for member in base
        ]
    elif pa.types.is_struct(base):
        field["dataType"] = "sc:Text"  # a struct inside a struct: its JSON text
    return field


def license_url(license: str) -> str:
    """A licence URL for a licence id (URLs pass through; unknown ids go to the SPDX page)."""
    if re.match(r"^https?://", license):
        return license
    known = LICENSE_URLS.get(license.lower())
    return known or f"https://spdx.org/licenses/{license}.html"


def merge_rai(rai: Mapping[str, Any] | None, manifest: Mapping[str, Any]) -> dict[str, Any]:
    """Defaults overlaid with ``rai`` (keys with or without ``rai:``), checked per RAI 1.0."""
    merged: dict[str, Any] = dict(DEFAULT_RAI)
    for key, value in (rai or {}).items():
        short = key.removeprefix("rai:")
        if short not in RAI_PROPERTIES:
            raise CroissantError("rai_unknown_property", f"rai:{short} is not an RAI 1.0 property")
        merged[short] = value
    if "hasSyntheticData" not in merged:
        merged["hasSyntheticData"] = bool((manifest.get("inputs") or {}).get("sample_world"))
    out: dict[str, Any] = {}
    for short in sorted(merged):
        value = merged[short]
        if value is None:
            continue
        if short in _RAI_SINGLE and not isinstance(value, str):
            raise CroissantError("rai_cardinality", f"rai:{short} must be one text")
        if short in _RAI_BOOL and not isinstance(value, bool):
            raise CroissantError("rai_type", f"rai:{short} must be a boolean")
        if short in _RAI_MANY and not isinstance(value, (str, list)):
            raise CroissantError("rai_type", f"rai:{short} must be a text or a list of texts")
        out[f"rai:{short}"] = list(value) if isinstance(value, (list, tuple)) else value
    return out


def _file_object(name: str, entry: Mapping[str, Any]) -> dict[str, Any]:
    suffix = Path(name).suffix
    if suffix not in ENCODING_FORMATS:
        raise CroissantError("unsupported_file", f"{name}: no encoding format for {suffix!r}")
    sha = entry.get("sha256")
    if not sha:
        raise CroissantError("missing_sha256", f"{name}: the manifest has no sha256")
    stem = Path(name).stem
    if suffix == ".parquet":
        description = f"Parquet table `{stem}` (zstd). " + TABLE_DESCRIPTIONS.get(stem, "")
    else:
        description = ("Film entities (SPEC A11), one JSON object per line, with subtitles of every "
                       "language inline.")
    obj: dict[str, Any] = {
        "@type": "cr:FileObject",
        "@id": name,
        "name": name,
        "description": description.strip(),
        "contentUrl": name,
        "encodingFormat": ENCODING_FORMATS[suffix],
        "sha256": sha,
    }
    if entry.get("size") is not None:
        obj["contentSize"] = f"{int(entry['size'])} B"
    return obj


def _record_set(table: str, schema: pa.Schema, file_id: str, rows: int | None) -> dict[str, Any]:
    fields = []
    names = schema.names
    for column in names:
        fields.append(_field(table, table, column, schema.field(column).type, file_id, column, None))
    description = TABLE_DESCRIPTIONS.get(table, f"Table `{table}`.")
    if rows is not None:
        description += f" {rows} rows."
    rs: dict[str, Any] = {
        "@type": "cr:RecordSet",
        "@id": table,
        "name": table,
        "description": description,
    }
    key = TABLE_KEYS.get(table)
    if key:
        missing = [k for k in key if k not in names]
        if missing:
            raise CroissantError("missing_key_column", f"{table}: key column(s) {missing} absent")
        rs["key"] = [{"@id": f"{table}/{k}"} for k in key] if len(key) > 1 else {"@id": f"{table}/{key[0]}"}
    rs["field"] = fields
    return rs


def default_cite_as(name: str, version: str, url: str) -> str:
    key = re.sub(r"[^a-z0-9]", "", name.lower()) or "dataset"
    return (f"@misc{{{key}_{version.replace('.', '_')},\n"
            f"  title = {{{name}: a multilingual subtitle benchmark corpus}},\n"
            f"  note = {{Version {version}}},\n"
            f"  howpublished = {{\\url{{{url}}}}}\n}}")


def build_croissant(
    release_dir: Path,
    manifest: dict,
    *,
    table_schemas: dict[str, pa.Schema],
    description: str,
    license: str,
    url: str,
    version: str,
    date_published: str | None,
    rai: dict,
    name: str | None = None,
    cite_as: str | None = None,
    creator: list[dict[str, Any]] | None = None,
    keywords: list[str] | None = None,
) -> dict:
    """Croissant 1.0 JSON-LD for the release described by ``manifest`` (files with sha256/size/rows)
    and ``table_schemas`` (one Arrow schema per Parquet table). ``release_dir`` is only used to check
    that every described file exists. Raises ``CroissantError`` (with a reason code) on bad input."""
    if not _SEMVER.match(version or ""):
        raise CroissantError("version_not_semver", f"version {version!r} is not MAJOR.MINOR.PATCH")
    files: Mapping[str, Mapping[str, Any]] = manifest.get("files") or {}
    name = name or manifest.get("name") or "cinesub"

    described = sorted(
        f for f in files
        if Path(f).suffix == ".parquet" or f == "films.jsonl"
    )
    for table in table_schemas:
        if f"{table}.parquet" not in files:
            raise CroissantError("table_not_in_manifest", f"{table}.parquet is not in the manifest")
    for f in described:
        if not (Path(release_dir) / f).is_file():
            raise CroissantError("file_missing", f"{f} is in the manifest but not in {release_dir}")

    doc: dict[str, Any] = {
        "@context": CROISSANT_CONTEXT,
        "@type": "sc:Dataset",
        "name": name,
        "description": description,
        "conformsTo": [CROISSANT_CONFORMS_TO, RAI_CONFORMS_TO],
        "citeAs": cite_as or default_cite_as(name, version, url),
        "creator": creator or [{"@type": "sc:Organization", "name": f"{name} maintainers", "url": url}],
        "keywords": sorted(keywords or [
            "subtitles", "multilingual", "films", "benchmark", "long-context",
            "age suitability", "motion picture ratings", "language safety",
        ]),
        "inLanguage": ["ar", "en", "fa", "id", "ro", "vi"],
        "license": license_url(license),
        "url": url,
        "version": version,
    }
    if date_published:
        doc["datePublished"] = date_published
    doc.update(merge_rai(rai, manifest))
    doc["distribution"] = [_file_object(f, files[f]) for f in described]
    doc["recordSet"] = [
        _record_set(t, table_schemas[t], f"{t}.parquet", files[f"{t}.parquet"].get("rows"))
        for t in sorted(table_schemas)
    ]
    return doc


def dumps_croissant(doc: Mapping[str, Any]) -> str:
    """Stable serialisation: indent 2, insertion order kept, UTF-8 text, trailing newline."""
    return json.dumps(doc, indent=2, ensure_ascii=False, sort_keys=False) + "\n"


def write_croissant(release_dir: Path, manifest: dict, **kwargs: Any) -> Path:
    """Build the Croissant document (same keywords as ``build_croissant``) and write
    ``<release_dir>/croissant.json``; returns its path."""
    doc = build_croissant(release_dir, manifest, **kwargs)
    path = Path(release_dir) / "croissant.json"
    path.write_text(dumps_croissant(doc), encoding="utf-8")
    return path
