"""Sanitization of subtitle tracks (SPEC A6): distribution artifacts out, e-mails redacted.

Rules live in the versioned data file ``validators/data/sanitize_patterns.yaml`` (see
``docs/sanitization.md``). Every pattern has an action:

- ``remove_entry`` -- a match marks the whole entry as a distribution artifact (team credits,
  provider promotions, platform-labelled handles);
- ``remove_span`` -- the match is artifact material (URLs, bare domains, @handles, contact
  labels); the entry is removed only when no letter is left once every such span is taken out,
  so an address a character mentions inside a sentence stays;
- ``redact`` -- an e-mail address: counted as artifact material like ``remove_span``; in an
  entry that is kept it is replaced by ``[email redacted]`` and the rest of the text is kept.

Matching runs on a normalized copy of the text (markup, bidi/zero-width controls and tatweel
removed, NFC) and is vectorised: one polars ``str.contains`` per pattern over the whole column,
``str.replace_all`` for residues and redaction. Entries are never renumbered or dropped from the
frame: ``SanitizeResult.entries`` is the input plus ``clean_content`` (None for a removed entry).
The audit log holds index, action, reasons, the sha256 of the entry's original content --
never the content itself -- and the entry's ``position`` (its 0-based place in the file, or the
input's ``position`` column when it has one), which names the entry even where an SRT index
repeats. A residual scan re-runs the rules over the cleaned text; anything it
still finds (which must be nothing) is returned in ``residual`` for the pipeline to fail the stage.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl
import yaml

from cinesub.settings import LANGUAGES

from validators._text import LETTER_RE, normalized_text

PATTERNS_FILE = Path(__file__).with_name("data") / "sanitize_patterns.yaml"
ACTIONS: tuple[str, ...] = ("remove_entry", "remove_span", "redact")
#: reason codes written to the audit log (comma-separated, sorted)
REASONS: tuple[str, ...] = ("credit", "promotion", "url", "handle", "contact", "email")
REDACTION = "[email redacted]"
LOG_COLUMNS: tuple[str, ...] = ("index", "action", "reasons", "sha256", "position")
LOG_SCHEMA: dict[str, pl.DataType] = {
    "index": pl.Int64,
    "action": pl.String,
    "reasons": pl.String,
    "sha256": pl.String,
    "position": pl.Int64,
}


@dataclass(frozen=True)
class Pattern:
    id: str
    languages: tuple[str, ...]
    reason: str
    action: str
    regex: str
    description: str = ""
    positive: tuple[str, ...] = ()
    negative: tuple[str, ...] = ()

    def applies_to(self, language: str) -> bool:
        return "all" in self.languages or language in self.languages

    def example_languages(self) -> tuple[str, ...]:
        """The track languages this pattern's examples are checked under."""
        return LANGUAGES if "all" in self.languages else self.languages


@dataclass(frozen=True)
class PatternSet:
    version: str
    patterns: tuple[Pattern, ...]

    def for_language(self, language: str) -> list[Pattern]:
        return [p for p in self.patterns if p.applies_to(language)]

    def by_id(self, pattern_id: str) -> Pattern:
        for p in self.patterns:
            if p.id == pattern_id:
                return p
        raise KeyError(pattern_id)


@dataclass
class SanitizeResult:
    #: the input rows, same order and indices, plus ``clean_content`` (None when removed)
    entries: pl.DataFrame
    #: audit rows: index, action (removed|modified), reasons, sha256 of the original content,
    #: position (the entry's place in the file: unambiguous where an index repeats)
    log: pl.DataFrame
    #: (index, pattern id) still matched after cleaning; must be empty
    residual: list[tuple[int, str]] = field(default_factory=list)
    #: version of the pattern file that produced this result
    version: str = ""

    @property
    def n_removed(self) -> int:
        return int((self.log["action"] == "removed").sum())

    @property
    def n_modified(self) -> int:
        return int((self.log["action"] == "modified").sum())


def _check_regex(pattern_id: str, regex: str) -> None:
    try:
        pl.Series([""], dtype=pl.String).str.contains(regex)
    except Exception as exc:  # polars raises ComputeError for an invalid regex
        raise ValueError(f"sanitize pattern {pattern_id!r}: invalid regex: {exc}") from exc


def parse_patterns(data: dict[str, Any]) -> PatternSet:
    """Validate the YAML structure and build a :class:`PatternSet` (raises ValueError)."""
    if not isinstance(data, dict) or "version" not in data or "patterns" not in data:
        raise ValueError("sanitize patterns: a mapping with 'version' and 'patterns' is required")
    seen: set[str] = set()
    patterns = []
    for raw in data["patterns"]:
        missing = {"id", "languages", "reason", "action", "regex"} - set(raw)
        if missing:
            raise ValueError(f"sanitize pattern {raw.get('id')!r}: missing {sorted(missing)}")
        pid = str(raw["id"])
        if pid in seen:
            raise ValueError(f"sanitize pattern {pid!r}: duplicate id")
        seen.add(pid)
        if raw["action"] not in ACTIONS:
            raise ValueError(f"sanitize pattern {pid!r}: action must be one of {ACTIONS}")
        if raw["reason"] not in REASONS:
            raise ValueError(f"sanitize pattern {pid!r}: reason must be one of {REASONS}")
        languages = tuple(str(x) for x in raw["languages"])
        unknown = [x for x in languages if x != "all" and x not in LANGUAGES]
        if not languages or unknown:
            raise ValueError(f"sanitize pattern {pid!r}: unknown languages {unknown}")
        _check_regex(pid, raw["regex"])
        examples = raw.get("examples") or {}
        patterns.append(
            Pattern(
                id=pid,
                languages=languages,
                reason=raw["reason"],
                action=raw["action"],
                regex=raw["regex"],
                description=str(raw.get("description", "")),
                positive=tuple(examples.get("positive") or ()),
                negative=tuple(examples.get("negative") or ()),
            )
        )
    return PatternSet(version=str(data["version"]), patterns=tuple(patterns))


@functools.lru_cache(maxsize=4)
def _load(path: str) -> PatternSet:
    with open(path, encoding="utf-8") as fh:
        return parse_patterns(yaml.safe_load(fh))


def load_patterns(path: str | Path | None = None) -> PatternSet:
    """The pattern set of ``path`` (default: the packaged ``sanitize_patterns.yaml``)."""
    return _load(str(Path(path) if path else PATTERNS_FILE))


def _any(exprs: list[pl.Expr]) -> pl.Expr:
    return pl.any_horizontal(exprs) if exprs else pl.lit(False)


def _labels(hits: list[tuple[str, str]]) -> pl.Expr:
    """A list column of the labels whose hit column is true (sorted, unique)."""
    if not hits:
        return pl.lit([], dtype=pl.List(pl.String))
    return (
        pl.concat_list(
            [
                pl.when(pl.col(col)).then(pl.lit(label, dtype=pl.String)).otherwise(None)
                for col, label in hits
            ]
        )
        .list.drop_nulls()
        .list.unique()
        .list.sort()
    )


def classify(
    frame: pl.DataFrame, patterns: list[Pattern], text_column: str = "content"
) -> pl.DataFrame:
    """The rule decisions for every row of ``frame`` (vectorised).

    Adds ``_norm`` (the normalized text), one boolean hit column per pattern (``_h0``, ``_h1``,
    ... in ``patterns`` order), ``_removed`` (bool) and ``_redact`` (bool: an e-mail to redact
    in a kept entry).
    """
    hit_cols = [f"_h{i}" for i in range(len(patterns))]
    out = frame.with_columns(
        normalized_text(pl.col(text_column).fill_null("")).alias("_norm")
    ).with_columns(
        [pl.col("_norm").str.contains(p.regex).alias(c) for c, p in zip(hit_cols, patterns)]
    )
    entry_hits = [pl.col(c) for c, p in zip(hit_cols, patterns) if p.action == "remove_entry"]
    span_hits = [pl.col(c) for c, p in zip(hit_cols, patterns) if p.action != "remove_entry"]
    redact_hits = [pl.col(c) for c, p in zip(hit_cols, patterns) if p.action == "redact"]
    out = out.with_columns(
        _any(entry_hits).alias("_entry"),
        (_any(span_hits) & ~_any(entry_hits)).alias("_span_only"),
        _any(redact_hits).alias("_redact"),
    )
    # The residue (one replace_all per span pattern) is computed only for the few rows where a
    # span pattern hit and no entry pattern did; everywhere else it cannot change the decision.
    residue = pl.col("_norm")
    for p in patterns:
        if p.action in ("remove_span", "redact"):
            residue = residue.str.replace_all(p.regex, " ")
    rows = out["_span_only"].arg_true()
    letters = pl.repeat(True, out.height, dtype=pl.Boolean, eager=True).alias("_letters")
    if len(rows):
        has_letters = out[rows].select(residue.str.contains(LETTER_RE)).to_series()
        letters = letters.scatter(rows, has_letters)
    return out.with_columns(
        (pl.col("_entry") | (pl.col("_span_only") & ~letters)).alias("_removed")
    ).drop("_entry", "_span_only")


def with_labels(decided: pl.DataFrame, patterns: list[Pattern]) -> pl.DataFrame:
    """Adds ``_ids`` and ``_reasons`` (matched pattern ids / reason codes, sorted lists) and
    ``_redact_reasons`` to rows of :func:`classify` (call it on the few rows that acted)."""
    hit_cols = [f"_h{i}" for i in range(len(patterns))]
    return decided.with_columns(
        _labels([(c, p.id) for c, p in zip(hit_cols, patterns)]).alias("_ids"),
        _labels([(c, p.reason) for c, p in zip(hit_cols, patterns)]).alias("_reasons"),
        _labels(
            [(c, p.reason) for c, p in zip(hit_cols, patterns) if p.action == "redact"]
        ).alias("_redact_reasons"),
    )


def _redacted(expr: pl.Expr, patterns: list[Pattern]) -> pl.Expr:
    for p in patterns:
        if p.action == "redact":
            expr = expr.str.replace_all(p.regex, REDACTION, literal=False)
    return expr


def residual_scan(cleaned: pl.DataFrame, patterns: list[Pattern]) -> list[tuple[int, str]]:
    """(index, pattern id) for every row of ``cleaned`` (``index``, ``clean_content``) that the
    rules would still remove or redact. Removed rows (``clean_content`` None) are skipped."""
    kept = cleaned.filter(pl.col("clean_content").is_not_null()).select("index", "clean_content")
    if kept.height == 0:
        return []
    decided = classify(kept, patterns, text_column="clean_content").filter(
        pl.col("_removed") | pl.col("_redact")
    )
    residual = []
    for index, ids in with_labels(decided, patterns).select("index", "_ids").iter_rows():
        for pid in ids:
            residual.append((int(index), pid))
    return residual


def sanitize(
    entries: pl.DataFrame,
    language: str,
    patterns: PatternSet | str | Path | None = None,
) -> SanitizeResult:
    """Remove distribution artifacts and redact e-mails in one track (see the module docstring)."""
    pattern_set = patterns if isinstance(patterns, PatternSet) else load_patterns(patterns)
    active = pattern_set.for_language(language)
    position = (pl.col("position") if "position" in entries.columns
                else pl.int_range(0, pl.len(), dtype=pl.Int64)).cast(pl.Int64).alias("position")
    decided = classify(entries.select(position, "index", "content"), active)
    modified = ~pl.col("_removed") & pl.col("_redact")
    clean = (
        pl.when(pl.col("_removed"))
        .then(pl.lit(None, dtype=pl.String))
        .when(modified)
        .then(_redacted(pl.col("content"), active))
        .otherwise(pl.col("content"))
    )
    out = entries.with_columns(decided.select(clean.alias("clean_content")).to_series())
    acted = with_labels(
        decided.filter(pl.col("_removed") | pl.col("_redact")), active
    ).select(
        pl.col("position"),
        pl.col("index").cast(pl.Int64),
        pl.col("content"),
        clean.alias("clean_content"),
        pl.when(pl.col("_removed")).then(pl.lit("removed")).otherwise(pl.lit("modified")).alias("action"),
        pl.when(pl.col("_removed"))
        .then(pl.col("_reasons").list.join(","))
        .otherwise(pl.col("_redact_reasons").list.join(","))
        .alias("reasons"),
    )
    digests = [
        hashlib.sha256(text.encode("utf-8")).hexdigest() for text in acted["content"].to_list()
    ]
    log = acted.select(
        "index", "action", "reasons", pl.Series("sha256", digests, dtype=pl.String), "position"
    ).cast(LOG_SCHEMA)
    # Unchanged kept entries were decided on exactly the text they keep, so only the entries
    # this run changed can still match; the scan re-runs every rule over their cleaned text.
    residual = residual_scan(acted.select("index", "clean_content"), active)
    return SanitizeResult(entries=out, log=log, residual=residual, version=pattern_set.version)
