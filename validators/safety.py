"""Language-safety gold from the English subtitle track (SPEC A9; seed 000, Appendix A.6).

Four lexical categories — ``strongProfanity``, ``crudeBodilyLanguage``, ``mildObscenity``,
``religiousProfanityAndExclamation`` — counted over the English entries after stripping markup
and stage directions:

* ``occurrenceCount``: every matched expression (two in one entry count twice);
* ``evidenceLineCount``: distinct entries with at least one match;
* ``evidenceSubtitleIndices``: those entries' original subtitle indices, sorted.

The wordlists and contextual rules live in the versioned ``validators/data/safety_lexicon.yaml``
(each rule with positive and negative test lines) and are documented in
``docs/language_safety.md``. One alternation per category is compiled once.

Pure: besides reading the lexicon file, no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

import yaml

LEXICON_PATH = Path(__file__).resolve().parent / "data" / "safety_lexicon.yaml"

#: SPEC A11 category names, in release order.
CATEGORIES: tuple[str, ...] = (
    "strongProfanity",
    "crudeBodilyLanguage",
    "mildObscenity",
    "religiousProfanityAndExclamation",
)

#: Zero-width start-of-sentence test substituted for ``{SOS}`` in lexicon regexes.
SOS = r'(?:^|(?<=[.!?…\-–—"])|(?<=[.!?…\-–—"] ))'

# --------------------------------------------------------------------------------------------
# cleaning (before matching)
# --------------------------------------------------------------------------------------------
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "\u201c": '"',
                              "\u201d": '"', "\u00a0": " ", "\u200b": "", "\u200e": "",
                              "\u200f": "", "\ufeff": ""})
_HTML_TAG = re.compile(r"</?[A-Za-z][^<>]*>")
_ASS_TAG = re.compile(r"\{\\[^{}]*\}")
_BRACKETED = re.compile(r"\[[^\[\]]*\]|\([^()]*\)")
_SPEAKER = re.compile(r"^(\s*[-–—]?\s*)[A-Z][A-Z0-9 .'&#-]*[A-Z0-9]\s*:(?=\s|$)")
_SPACES = re.compile(r"[ \t\f\v]+")


def _is_caps_direction(line: str) -> bool:
    """An all-capital line (>= 2 letters, none lower case) not ending in ! or ?."""
    letters = [c for c in line if c.isalpha()]
    if len(letters) < 2 or any(c.islower() for c in letters):
        return False
    return not line.rstrip().endswith(("!", "?"))


def _pre_clean(text: str) -> list[str]:
    """Markup, bracketed directions and speaker labels removed; lines with single spaces."""
    t = text.translate(_APOSTROPHES)
    if "\r" in t:
        t = t.replace("\r\n", "\n").replace("\r", "\n")
    if "<" in t:
        t = _HTML_TAG.sub("", t)
    if "{" in t:
        t = _ASS_TAG.sub("", t)
    # repeat so nested brackets go too: "[MAN (ON PHONE)]"
    while "[" in t or "(" in t:
        new = _BRACKETED.sub(" ", t)
        if new == t:
            break
        t = new
    lines = []
    for line in t.split("\n"):
        line = _SPEAKER.sub(r"\1", line)
        line = _SPACES.sub(" ", line).strip()
        if line.strip("-–— "):
            lines.append(line)
    return lines


def clean_text(text: str, *, keep_caps: bool = False) -> str:
    """The text the matcher sees.

    Removes HTML-style tags (``<i>``, ``<font ...>``), ASS overrides (``{\\an8}``), bracketed
    ``[...]`` and ``(...)`` directions and upper-case speaker labels (``MAN:``, ``GUAPO:``; the
    speech after the label stays), normalises curly apostrophes/quotes and spaces, and drops
    all-capital lines that do not end in ``!`` or ``?`` (stage directions such as ``GUNSHOT``).
    ``keep_caps`` keeps all-capital lines (used for tracks written entirely in capitals).
    """
    lines = _pre_clean(text)
    if not keep_caps:
        lines = [line for line in lines if not _is_caps_direction(line)]
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# lexicon
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Rule:
    id: str
    category: str
    regex: str
    description: str
    positive: tuple[Any, ...]
    negative: tuple[str, ...]
    trigger: tuple[str, ...] = ()


@dataclass
class Lexicon:
    version: str
    rules: list[Rule]
    #: category -> compiled alternation (one named group per rule)
    patterns: dict[str, re.Pattern[str]]
    #: group name -> rule id
    group_rule: dict[str, str] = field(default_factory=dict)
    #: category -> pre-filter of the category's trigger substrings
    triggers: dict[str, re.Pattern[str]] = field(default_factory=dict)
    #: union of all triggers
    any_trigger: re.Pattern[str] | None = None


def _expand(regex: str) -> str:
    return regex.replace("{SOS}", SOS)


@lru_cache(maxsize=4)
def load_lexicon(path: str | None = None) -> Lexicon:
    data = yaml.safe_load(Path(path or LEXICON_PATH).read_text(encoding="utf-8"))
    if tuple(data["categories"]) != CATEGORIES:
        raise ValueError("safety_lexicon.yaml: categories must be the four SPEC A9 categories")
    rules: list[Rule] = []
    seen: set[str] = set()
    for item in data["rules"]:
        rid = item["id"]
        if rid in seen or not re.fullmatch(r"[a-z][a-z0-9_]*", rid):
            raise ValueError(f"safety_lexicon.yaml: bad or duplicate rule id {rid!r}")
        seen.add(rid)
        if item["category"] not in CATEGORIES:
            raise ValueError(f"rule {rid}: unknown category {item['category']!r}")
        compiled = re.compile(_expand(item["regex"]), re.IGNORECASE | re.MULTILINE)
        if compiled.groups:
            raise ValueError(f"rule {rid}: use non-capturing groups only")
        if compiled.search(""):
            raise ValueError(f"rule {rid}: matches the empty string")
        trigger = tuple(str(t) for t in item.get("trigger") or ())
        if not trigger or any(not t or t != t.lower() for t in trigger):
            raise ValueError(f"rule {rid}: needs lower-case trigger substrings")
        rules.append(Rule(rid, item["category"], item["regex"], item.get("description", ""),
                          tuple(item.get("positive") or ()), tuple(item.get("negative") or ()),
                          trigger))
    patterns: dict[str, re.Pattern[str]] = {}
    group_rule: dict[str, str] = {}
    for cat in CATEGORIES:
        parts = []
        for rule in rules:
            if rule.category == cat:
                group = f"r_{rule.id}"
                group_rule[group] = rule.id
                parts.append(f"(?P<{group}>{_expand(rule.regex)})")
        if not parts:
            raise ValueError(f"safety_lexicon.yaml: no rule for {cat}")
        patterns[cat] = re.compile("|".join(parts), re.IGNORECASE | re.MULTILINE)
    triggers = {
        cat: _literal_alternation({t for r in rules if r.category == cat for t in r.trigger})
        for cat in CATEGORIES
    }
    any_trigger = _literal_alternation({t for r in rules for t in r.trigger})
    return Lexicon(str(data["version"]), rules, patterns, group_rule, triggers, any_trigger)


def _literal_alternation(words: set[str]) -> re.Pattern[str]:
    # longest first is not needed for a presence test; sorted for a stable pattern
    return re.compile("|".join(re.escape(w) for w in sorted(words)), re.IGNORECASE)


# --------------------------------------------------------------------------------------------
# results
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SafetyMatch:
    """One matched expression (diagnostic; not part of the public release)."""

    index: int
    category: str
    span: str
    rule: str
    #: character offsets in the cleaned entry text (see :func:`clean_text`)
    start: int
    end: int


@dataclass(frozen=True)
class CategoryResult:
    occurrenceCount: int
    evidenceLineCount: int
    evidenceSubtitleIndices: list[int]

    def to_json(self) -> dict[str, Any]:
        return {
            "occurrenceCount": self.occurrenceCount,
            "evidenceLineCount": self.evidenceLineCount,
            "evidenceSubtitleIndices": list(self.evidenceSubtitleIndices),
        }


@dataclass(frozen=True)
class SafetyResult:
    strongProfanity: CategoryResult
    crudeBodilyLanguage: CategoryResult
    mildObscenity: CategoryResult
    religiousProfanityAndExclamation: CategoryResult
    matches: list[SafetyMatch]
    lexicon_version: str
    entries_scanned: int
    #: True when the track was mostly capitals and all-capital lines were kept
    caps_track: bool = False

    @property
    def categories(self) -> dict[str, CategoryResult]:
        return {cat: getattr(self, cat) for cat in CATEGORIES}


# --------------------------------------------------------------------------------------------
# scanning
# --------------------------------------------------------------------------------------------
def _entries(entries: Any) -> list[tuple[int, str]]:
    """(index, content) pairs from tuples, dicts, records or a polars DataFrame."""
    if hasattr(entries, "columns") and hasattr(entries, "get_column"):  # polars DataFrame
        idx = entries.get_column("index").to_list()
        txt = entries.get_column("content").to_list()
        return [(int(i), t or "") for i, t in zip(idx, txt)]
    out: list[tuple[int, str]] = []
    for item in entries:
        if isinstance(item, dict):
            out.append((int(item["index"]), item.get("content") or ""))
        elif isinstance(item, (tuple, list)):
            out.append((int(item[0]), item[1] or ""))
        else:
            out.append((int(item.index), getattr(item, "content", "") or ""))
    return out


def scan(
    entries: Iterable[tuple[int, str]] | Any,
    *,
    lexicon: Lexicon | None = None,
    prefilter: bool = True,
) -> SafetyResult:
    """Scan an English track: ``[(index, content), ...]`` or a DataFrame with index, content.

    A track whose letter-bearing lines are mostly all capitals (some old subtitles are written
    that way) keeps its all-capital lines; otherwise they are dropped as stage directions.
    ``prefilter=False`` runs every category alternation on every entry (same result, slower;
    kept for checking the trigger lists).
    """
    lex = lexicon or load_lexicon()
    pairs = _entries(entries)
    pre = [(i, _pre_clean(text)) for i, text in pairs]
    lettered = caps = 0
    for _, lines in pre:
        for line in lines:
            letters = [c for c in line if c.isalpha()]
            if len(letters) >= 2:
                lettered += 1
                caps += not any(c.islower() for c in letters)
    caps_track = lettered > 0 and caps / lettered > 0.5
    matches: list[SafetyMatch] = []
    counts = {cat: 0 for cat in CATEGORIES}
    lines_hit: dict[str, set[int]] = {cat: set() for cat in CATEGORIES}
    patterns = [(cat, lex.patterns[cat]) for cat in CATEGORIES]
    group_rule = lex.group_rule
    for index, lines in pre:
        if not caps_track:
            lines = [line for line in lines if not _is_caps_direction(line)]
        if not lines:
            continue
        text = "\n".join(lines)
        if prefilter and lex.any_trigger is not None and lex.any_trigger.search(text) is None:
            continue
        for cat, pattern in patterns:
            if prefilter and lex.triggers[cat].search(text) is None:
                continue
            for m in pattern.finditer(text):
                counts[cat] += 1
                lines_hit[cat].add(index)
                matches.append(SafetyMatch(index, cat, m.group(0), group_rule[m.lastgroup],
                                           m.start(), m.end()))
    results = {
        cat: CategoryResult(counts[cat], len(lines_hit[cat]), sorted(lines_hit[cat]))
        for cat in CATEGORIES
    }
    matches.sort(key=lambda x: (x.index, x.start, CATEGORIES.index(x.category)))
    return SafetyResult(**results, matches=matches, lexicon_version=lex.version,
                        entries_scanned=len(pairs), caps_track=caps_track)


def safety_to_json(result: SafetyResult) -> dict[str, Any]:
    """SPEC A11 ``languageContentAssessment.categories``."""
    return {cat: getattr(result, cat).to_json() for cat in CATEGORIES}


def matches_frame(result: SafetyResult):
    """The diagnostic table (index, category, span, rule, start, end) as a polars DataFrame."""
    import polars as pl

    return pl.DataFrame(
        {
            "index": [m.index for m in result.matches],
            "category": [m.category for m in result.matches],
            "span": [m.span for m in result.matches],
            "rule": [m.rule for m in result.matches],
            "start": [m.start for m in result.matches],
            "end": [m.end for m in result.matches],
        },
        schema={"index": pl.Int64, "category": pl.Utf8, "span": pl.Utf8, "rule": pl.Utf8,
                "start": pl.Int64, "end": pl.Int64},
    )


def lexicon_version() -> str:
    return load_lexicon().version
