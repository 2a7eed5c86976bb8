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
removed, NFC) and is vectorised over all entries of a batch -- one track (:func:`sanitize`) or many
tracks' entries in one frame with a track key (:func:`sanitize_batch`), with the same decisions:

1. **prefilter** -- every pattern's necessary literals (:func:`validators._literals.required_literals`:
   strings one of which every match contains) are searched in one Aho-Corasick pass over all
   entries (polars ``str.contains_any``, ASCII case-insensitive, non-ASCII case variants listed);
   the normalized text is computed only for the entries normalization can change (markup,
   controls, ``\r``; a character NFC may change: outside :data:`NFC_STABLE_RANGES`, or two
   adjacent marks of :data:`NFC_REORDER_ONLY_RANGES`), elsewhere it *is* the content. An entry containing no literal cannot match any pattern: it is kept unchanged;
2. **decision** -- on the few candidate entries, one polars ``str.contains`` per pattern of the
   track's language -- only for the patterns one of whose literals occurs in those entries --,
   ``str.replace_all`` for residues and redaction (:func:`classify`). Compiling a pattern costs
   more than matching it over a few thousand entries, so this matters for small batches.

A pattern whose literals cannot be derived (or whose positive examples would escape them) turns
the prefilter off for its pattern set: every entry is then a candidate (slower, same result).
``prefilter=False`` forces that path (the equivalence tests compare both).

Entries are never renumbered or dropped from the frame: ``SanitizeResult.entries`` is the input
plus ``clean_content`` (None for a removed entry). The audit log holds index, action, reasons, the sha256 of the entry's original content --
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

from validators._literals import required_literals
from validators._text import CONTROL_RE, LETTER_RE, normalized_text, strip_markup
from validators._text import MARKUP_RE as _TEXT_MARKUP_RE

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


#: Code points that are their own NFC in every context (assigned, canonical combining class 0, NFC
#: quick check "Yes", never the second character of a canonical composition) in the blocks subtitle
#: text is written in, minus ``\r``, ``<``, ``{`` and the controls :data:`validators._text.CONTROL_RE`
#: removes. An entry made only of these is its own normalized text. A test recomputes every range
#: from the Unicode database.
NFC_STABLE_RANGES: tuple[tuple[int, int], ...] = (
    (0x0000, 0x000C), (0x000E, 0x003B), (0x003D, 0x007A), (0x007C, 0x024F), (0x0370, 0x0373),
    (0x0375, 0x0377), (0x037A, 0x037D), (0x037F, 0x037F), (0x0384, 0x0386), (0x0388, 0x038A),
    (0x038C, 0x038C), (0x038E, 0x03A1), (0x03A3, 0x0482), (0x0488, 0x04FF), (0x0600, 0x060F),
    (0x061B, 0x063F), (0x0641, 0x064A), (0x0660, 0x066F), (0x0671, 0x06D5), (0x06DD, 0x06DE),
    (0x06E5, 0x06E6), (0x06E9, 0x06E9), (0x06EE, 0x06FF), (0x1E00, 0x1EFF), (0x2002, 0x200A),
    (0x2010, 0x2029), (0x202F, 0x205F), (0x206A, 0x206F), (0x20A0, 0x20C0), (0x2100, 0x2125),
    (0x2127, 0x2129), (0x212C, 0x214F), (0x2190, 0x22FF), (0x2500, 0x26FF), (0x3000, 0x3029),
    (0x3030, 0x303F), (0xFB50, 0xFBC2), (0xFBD3, 0xFD8F), (0xFD92, 0xFDC7), (0xFDCF, 0xFDCF),
    (0xFDF0, 0xFDFF), (0xFE70, 0xFE74), (0xFE76, 0xFEFC), (0xFF01, 0xFFBE), (0xFFC2, 0xFFC7),
    (0xFFCA, 0xFFCF), (0xFFD2, 0xFFD7), (0xFFDA, 0xFFDC), (0xFFE0, 0xFFE6), (0xFFE8, 0xFFEE),
)
#: Combining marks (canonical combining class > 0) that are their own NFC and never compose with a
#: preceding character (Arabic harakat, Quranic marks, ...): NFC can only reorder them, and only
#: where two such marks are adjacent. A test recomputes these ranges too.
NFC_REORDER_ONLY_RANGES: tuple[tuple[int, int], ...] = (
    (0x0483, 0x0487), (0x0610, 0x061A), (0x064B, 0x0652), (0x0656, 0x065F), (0x0670, 0x0670),
    (0x06D6, 0x06DC), (0x06DF, 0x06E4), (0x06E7, 0x06E8), (0x06EA, 0x06ED), (0x302A, 0x302F),
)


def _class(ranges: tuple[tuple[int, int], ...]) -> str:
    return "".join(f"\\x{{{a:X}}}" if a == b else f"\\x{{{a:X}}}-\\x{{{b:X}}}" for a, b in ranges)


#: the characters :func:`validators._text.strip_markup` can remove or change (CR, ``<``, ``{``, controls)
MARKUP_RE = _TEXT_MARKUP_RE
_MARKUP_CHARS = "\\r<{" + CONTROL_RE[1:-1]
#: an entry NFC may change, markup aside: a character neither stable nor reorder-only (nor markup),
#: or two adjacent reorder-only marks
NEEDS_NFC_RE = (f"[^{_class(NFC_STABLE_RANGES)}{_class(NFC_REORDER_ONLY_RANGES)}{_MARKUP_CHARS}]"
                f"|[{_class(NFC_REORDER_ONLY_RANGES)}]{{2}}")
#: an entry normalization may change: :data:`MARKUP_RE` or :data:`NEEDS_NFC_RE`
NEEDS_NORMALIZATION_RE = MARKUP_RE + "|" + NEEDS_NFC_RE
#: an entry with markup NFC may change after the markup is stripped (stripping can bring two
#: marks together): any character outside the stable ranges (markup aside)
NEEDS_NFC_AFTER_STRIP_RE = f"[^{_class(NFC_STABLE_RANGES)}{_MARKUP_CHARS}]"


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


@functools.lru_cache(maxsize=1024)
def pattern_literals(pattern: Pattern) -> tuple[str, ...] | None:
    """The literals one of which every match of ``pattern`` contains (ASCII case-insensitive;
    :func:`validators._literals.required_literals`), or None. None too when one of the pattern's
    positive examples would escape them (a guard: it cannot happen for a correct derivation)."""
    lits = required_literals(pattern.regex)
    if lits is None:
        return None
    lits = tuple(sorted(lits))
    if pattern.positive:
        examples = pl.Series(list(pattern.positive), dtype=pl.String).to_frame("t")
        normal = examples.select(normalized_text(pl.col("t"))).to_series()
        if not normal.str.contains_any(list(lits), ascii_case_insensitive=True).all():
            return None
    return lits


_ASCII_LOWER = {c: c + 32 for c in range(65, 91)}


def _ascii_lower(text: str) -> str:
    return text.translate(_ASCII_LOWER)


@functools.lru_cache(maxsize=1024)
def _literal_keys(pattern: Pattern) -> frozenset[str] | None:
    lits = pattern_literals(pattern)
    return None if lits is None else frozenset(_ascii_lower(x) for x in lits)


def _present_literals(text: pl.Series, patterns: list[Pattern]) -> frozenset[str]:
    """The literals of ``patterns`` that occur in some row of ``text`` (ASCII-lowercased), found
    in one overlapping Aho-Corasick pass (``str.extract_many``)."""
    lits = sorted({x for p in patterns for x in (pattern_literals(p) or ())})
    if not lits or text.len() == 0:
        return frozenset()
    found = text.str.extract_many(lits, ascii_case_insensitive=True, overlapping=True)
    return frozenset(_ascii_lower(x) for x in found.explode().drop_nulls().unique().to_list())


def _may_match(present: frozenset[str], pattern: Pattern) -> bool:
    """False only when ``pattern`` cannot match any of the rows whose literals are ``present``."""
    keys = _literal_keys(pattern)
    return keys is None or not keys.isdisjoint(present)


def classify(
    frame: pl.DataFrame, patterns: list[Pattern], text_column: str = "content", *, prefilter: bool = False
) -> pl.DataFrame:
    """The rule decisions for every row of ``frame`` (vectorised).

    Adds ``_norm`` (the normalized text), one boolean hit column per pattern (``_h0``, ``_h1``,
    ... in ``patterns`` order), ``_removed`` (bool) and ``_redact`` (bool: an e-mail to redact
    in a kept entry). ``prefilter``: a pattern none of whose literals (:func:`pattern_literals`)
    occurs in any row is not run (its hit column is all false: it cannot match), which saves its
    compilation on small frames; the decisions are the same.
    """
    hit_cols = [f"_h{i}" for i in range(len(patterns))]
    out = frame.with_columns(normalized_text(pl.col(text_column).fill_null("")).alias("_norm"))
    norm = out["_norm"]
    present = _present_literals(norm, patterns) if prefilter else frozenset()
    out = out.with_columns(
        [
            (pl.col("_norm").str.contains(p.regex) if not prefilter or _may_match(present, p)
             else pl.repeat(False, pl.len(), dtype=pl.Boolean)).alias(c)
            for c, p in zip(hit_cols, patterns)
        ]
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
    rows = out["_span_only"].arg_true()
    letters = pl.repeat(True, out.height, dtype=pl.Boolean, eager=True).alias("_letters")
    if len(rows):
        residue = pl.col("_norm")
        span = [p for p in patterns if p.action in ("remove_span", "redact")]
        span_present = _present_literals(norm.gather(rows), span) if prefilter else frozenset()
        for p in span:
            # with ``prefilter``, a span pattern with no literal in these rows cannot match even
            # after earlier replacements (they insert a space; its literals hold none) -- skip it
            if (not prefilter or _may_match(span_present, p)
                    or any(ch.isspace() for lit in pattern_literals(p) or () for ch in lit)):
                residue = residue.str.replace_all(p.regex, " ")
        has_letters = out[rows].select(residue.str.contains(LETTER_RE)).to_series()
        letters = letters.scatter(rows, has_letters)
    return out.with_columns(
        (pl.col("_entry") | (pl.col("_span_only") & ~letters)).alias("_removed")
    ).drop("_entry", "_span_only")


def with_labels(decided: pl.DataFrame, patterns: list[Pattern]) -> pl.DataFrame:
    """Adds ``_ids`` and ``_reasons`` (matched pattern ids / reason codes, sorted lists) and
    ``_redact_reasons`` to rows of :func:`classify` (call it on the few rows that acted)."""
    # a pattern that hit no row adds no label: leave it out of the expressions
    hit = [(f"_h{i}", p) for i, p in enumerate(patterns) if decided.height and decided[f"_h{i}"].any()]
    return decided.with_columns(
        _labels([(c, p.id) for c, p in hit]).alias("_ids"),
        _labels([(c, p.reason) for c, p in hit]).alias("_reasons"),
        _labels([(c, p.reason) for c, p in hit if p.action == "redact"]).alias("_redact_reasons"),
    )


def _redacted(expr: pl.Expr, patterns: list[Pattern]) -> pl.Expr:
    for p in patterns:
        if p.action == "redact":
            expr = expr.str.replace_all(p.regex, REDACTION, literal=False)
    return expr


def residual_scan(
    cleaned: pl.DataFrame, patterns: list[Pattern], *, prefilter: bool = True
) -> list[tuple[int, str]]:
    """(index, pattern id) for every row of ``cleaned`` (``index``, ``clean_content``) that the
    rules would still remove or redact. Removed rows (``clean_content`` None) are skipped.
    ``prefilter``: as in :func:`classify`."""
    kept = cleaned.filter(pl.col("clean_content").is_not_null()).select("index", "clean_content")
    if kept.height == 0:
        return []
    decided = classify(kept, patterns, text_column="clean_content", prefilter=prefilter).filter(
        pl.col("_removed") | pl.col("_redact")
    )
    residual = []
    for index, ids in with_labels(decided, patterns).select("index", "_ids").iter_rows():
        for pid in ids:
            residual.append((int(index), pid))
    return residual


@functools.lru_cache(maxsize=64)
def prefilter_literals(patterns: tuple[Pattern, ...]) -> tuple[str, ...] | None:
    """The literals one of which every match of any of ``patterns`` contains (sorted), or None
    when some pattern has none (:func:`pattern_literals`): then every entry must be matched."""
    literals: set[str] = set()
    for p in patterns:
        lits = pattern_literals(p)
        if lits is None:
            return None
        literals.update(lits)
    return tuple(sorted(literals))


def candidates(content: pl.Series, literals: tuple[str, ...]) -> pl.Series:
    """Boolean per entry: its normalized text contains one of ``literals`` (ASCII
    case-insensitive). The normalized text is computed only for the entries normalization can
    change (:data:`NEEDS_NORMALIZATION_RE`); elsewhere it is the content."""
    text = content.fill_null("")
    if not literals:  # no pattern applies
        return pl.repeat(False, len(text), dtype=pl.Boolean, eager=True)
    hit = text.str.contains_any(list(literals), ascii_case_insensitive=True)
    # an entry whose raw text already holds a literal is a candidate anyway (its decision is
    # made on the normalized text later); only the others need their normalized text here
    need = (text.str.contains(NEEDS_NORMALIZATION_RE) & ~hit).arg_true()
    if len(need):
        flags = text.gather(need).to_frame("t").select(
            m=pl.col("t").str.contains(MARKUP_RE), n=pl.col("t").str.contains(NEEDS_NFC_RE)
        )
        # normalized_text = NFC(strip_markup(t)); strip_markup only removes characters (and turns
        # CRLF into LF): without markup the normalized text is NFC(t); with markup, NFC can only
        # change it where a character outside the stable ranges is left
        normal = text.gather(need)
        m = flags["m"].arg_true()
        if len(m):
            normal = normal.scatter(m, normal.gather(m).to_frame("t").select(strip_markup(pl.col("t"))).to_series())
        n = flags["n"]
        if len(m):
            n = n.scatter(m, normal.gather(m).str.contains(NEEDS_NFC_AFTER_STRIP_RE))
        n = n.arg_true()
        if len(n):
            normal = normal.scatter(n, normal.gather(n).str.normalize("NFC"))
        hit = hit.scatter(need, normal.str.contains_any(list(literals), ascii_case_insensitive=True))
    return hit


def _acted(frame: pl.DataFrame, active: list[Pattern], prefilter: bool) -> tuple[pl.DataFrame, list[tuple[int, str]]]:
    """The entries of ``frame`` (``_row, position, index, content`` and key columns) the rules
    remove or redact: key columns, ``_row, position, index, content, clean_content, action,
    reasons``; plus the residual scan as ``(_row, pattern id)``."""
    keys = [c for c in frame.columns if c not in _ACTED_SCHEMA and c != "_lang"]
    decided = classify(frame, active, prefilter=prefilter)
    modified = ~pl.col("_removed") & pl.col("_redact")
    clean = (
        pl.when(pl.col("_removed"))
        .then(pl.lit(None, dtype=pl.String))
        .when(modified)
        .then(_redacted(pl.col("content"), active))
        .otherwise(pl.col("content"))
    )
    acted = with_labels(decided.filter(pl.col("_removed") | pl.col("_redact")), active).select(
        *keys,
        pl.col("_row"),
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
    # Unchanged kept entries were decided on exactly the text they keep, so only the entries
    # this run changed can still match; the scan re-runs every rule over their cleaned text.
    residual = residual_scan(acted.select(pl.col("_row").alias("index"), "clean_content"), active,
                             prefilter=prefilter)
    return acted, residual


_ACTED_SCHEMA = {"_row": pl.Int64, "position": pl.Int64, "index": pl.Int64, "content": pl.String,
                 "clean_content": pl.String, "action": pl.String, "reasons": pl.String}


def _sanitize_frame(
    frame: pl.DataFrame, languages: list[str], pattern_set: PatternSet, prefilter: bool
) -> tuple[pl.DataFrame, dict[str, list[tuple[int, int, str]]]]:
    """``frame``: ``_row`` (0..n-1), ``_lang``, ``position``, ``index``, ``content`` (plus any
    key). Returns the acted rows (with the key columns, ordered by ``_row``) and, per language,
    the residual scan as ``(_row, index, pattern id)``."""
    actives = {lang: pattern_set.for_language(lang) for lang in languages}
    if prefilter and frame.height:
        union = tuple(p for p in pattern_set.patterns if any(p in a for a in actives.values()))
        literals = prefilter_literals(union)
        if literals is not None:
            frame = frame.filter(candidates(frame["content"], literals))
    parts, residual = [], {}
    for lang in languages:
        sub = frame if len(languages) == 1 else frame.filter(pl.col("_lang") == lang)
        if sub.height == 0:
            continue
        acted, res = _acted(sub, actives[lang], prefilter)
        parts.append(acted)
        if res:
            index_of = dict(zip(acted["_row"].to_list(), acted["index"].to_list()))
            residual[lang] = [(row, index_of[row], pid) for row, pid in res]
    if not parts:
        keys = {c: frame.schema[c] for c in frame.columns if c not in _ACTED_SCHEMA and c != "_lang"}
        return pl.DataFrame(schema={**keys, **_ACTED_SCHEMA}), residual
    return pl.concat(parts, how="vertical_relaxed").sort("_row"), residual


def _digests(texts: pl.Series) -> pl.Series:
    return pl.Series("sha256", [hashlib.sha256(t.encode("utf-8")).hexdigest() for t in texts.to_list()],
                     dtype=pl.String)


def _with_clean(entries: pl.DataFrame, acted: pl.DataFrame) -> pl.DataFrame:
    clean = entries["content"].clone().alias("clean_content")
    if acted.height:
        clean = clean.scatter(acted["_row"], acted["clean_content"])
    return entries.with_columns(clean)


def sanitize(
    entries: pl.DataFrame,
    language: str,
    patterns: PatternSet | str | Path | None = None,
    *,
    prefilter: bool = True,
) -> SanitizeResult:
    """Remove distribution artifacts and redact e-mails in one track (see the module docstring)."""
    pattern_set = patterns if isinstance(patterns, PatternSet) else load_patterns(patterns)
    position = (pl.col("position") if "position" in entries.columns
                else pl.int_range(0, pl.len(), dtype=pl.Int64)).cast(pl.Int64).alias("position")
    frame = entries.select(
        pl.int_range(0, pl.len(), dtype=pl.Int64).alias("_row"), position, "index", "content"
    )
    acted, residual = _sanitize_frame(frame, [language], pattern_set, prefilter)
    log = acted.select(
        "index", "action", "reasons", _digests(acted["content"]), "position"
    ).cast(LOG_SCHEMA)
    return SanitizeResult(
        entries=_with_clean(entries, acted),
        log=log,
        residual=[(i, pid) for _, i, pid in residual.get(language, [])],
        version=pattern_set.version,
    )


@dataclass
class BatchSanitizeResult:
    """:func:`sanitize_batch`'s result: as :class:`SanitizeResult`, with the track key."""

    #: the input rows, same order, plus ``clean_content`` (None when removed)
    entries: pl.DataFrame
    #: audit rows: the track key, then :data:`LOG_COLUMNS`
    log: pl.DataFrame
    #: (track, index, pattern id) still matched after cleaning; must be empty
    residual: list[tuple[Any, int, str]] = field(default_factory=list)
    version: str = ""
    track_column: str = "track_id"

    def track(self, track: Any) -> SanitizeResult:
        """One track's part, exactly what :func:`sanitize` returns for that track alone."""
        key = self.track_column
        return SanitizeResult(
            entries=self.entries.filter(pl.col(key) == track).drop(key),
            log=self.log.filter(pl.col(key) == track).drop(key),
            residual=[(i, pid) for t, i, pid in self.residual if t == track],
            version=self.version,
        )


def sanitize_batch(
    entries: pl.DataFrame,
    language_by_track: dict[Any, str],
    patterns: PatternSet | str | Path | None = None,
    *,
    track_column: str = "track_id",
    prefilter: bool = True,
) -> BatchSanitizeResult:
    """Sanitize many tracks' entries in one vectorised call (see the module docstring).

    ``entries``: one row per entry with ``track_column``, ``index``, ``content`` and optionally
    ``position`` (default: the entry's 0-based place within its track, in frame order);
    ``language_by_track``: each track's language (every track of ``entries`` must have one, else
    ValueError). Per track the result is exactly :func:`sanitize`'s on that track alone
    (:meth:`BatchSanitizeResult.track`); the prefilter runs once over all entries, the patterns
    of each language only on that language's candidate entries.
    """
    pattern_set = patterns if isinstance(patterns, PatternSet) else load_patterns(patterns)
    key = track_column
    tracks = entries[key].unique()
    missing = [t for t in tracks.to_list() if t not in language_by_track]
    if missing:
        raise ValueError(f"sanitize_batch: no language for tracks {sorted(map(str, missing))[:5]}"
                         f"{' ...' if len(missing) > 5 else ''}")
    mapping = {t: language_by_track[t] for t in tracks.to_list()}
    position = (pl.col("position") if "position" in entries.columns
                else pl.int_range(0, pl.len(), dtype=pl.Int64).over(key)).cast(pl.Int64).alias("position")
    frame = entries.select(
        pl.int_range(0, pl.len(), dtype=pl.Int64).alias("_row"),
        pl.col(key).replace_strict(mapping, return_dtype=pl.String).alias("_lang"),
        pl.col(key), position, "index", "content",
    )
    languages = sorted(set(mapping.values()))
    acted, residual = _sanitize_frame(frame, languages, pattern_set, prefilter)
    log = pl.concat(
        [acted.select(key), acted.select("index", "action", "reasons", _digests(acted["content"]),
                                         "position").cast(LOG_SCHEMA)],
        how="horizontal",
    )
    track_of = dict(zip(acted["_row"].to_list(), acted[key].to_list()))
    return BatchSanitizeResult(
        entries=_with_clean(entries, acted),
        log=log,
        residual=[(track_of.get(r), i, pid) for lang in languages for r, i, pid in residual.get(lang, [])],
        version=pattern_set.version,
        track_column=key,
    )
