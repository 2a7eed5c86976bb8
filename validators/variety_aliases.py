"""Variety title aliases → IMDb records (SPEC B1, issue 9): counting, suggestion, decision.

*Variety* names films tersely and inconsistently: dropped leading articles ("Cowboy and Lady"),
truncated titles ("Gone" for *Gone with the Wind*), headline forms without small words ("Gone
With Wind", "Treasure Sierra Madre", "Abbott - Costello Meet Frankenstein"), quotes, star
prefixes (``Betty Compson in 'The Wild Flower'``), numbers as digits ("100 Men and a Girl"),
abbreviations ("Toast of N. Y."), split or joined words ("Cave Man", "Up Stairs") and OCR line
breaks ("Paja-mas", "Noth- ing to Wear"). SPEC B1 maps, per year, every alias seen at least 3
times to an IMDb record (a curated table); this module automates the suggestion so a curator only
confirms the doubtful ones.

Pipeline (all pure functions):

* :func:`count_aliases` / :func:`aliases_to_resolve` — per year, how often each printed title
  occurs in extracted tuples; the ones seen ``>= 3`` times are resolved.
* :func:`title_forms` — normalised forms of a title: ``full`` (accents, quotes, punctuation,
  ``&``, ``N. Y.``, numbers and a leading article normalised), ``content`` (small words such as
  *the, of, with* dropped: Variety's headline style) and ``compact`` (content words without
  spaces: "cave man" = "caveman"); hyphens are tried both joined ("pajamas") and split.
* :class:`AliasResolver` — candidates from an IMDb-like catalog (``imdb, title, year[, votes]``)
  inside a year window (a film shown in year Y was released in ``[Y-3, Y+1]``: in the dev data
  95% of the mapped films are released in Y or Y-1, 99% in the window, the rest are reissues);
  older films (reissues) are searched too but only count on a near-exact match and with a
  penalty. Each candidate gets a match strength in 0–1 (the best of full-form, content-form and
  compact-form similarity, plus a truncation rule: the alias is a contiguous run of the title's
  content words, "Gone" ⊂ "Gone with the Wind"), popularity (``votes``) breaks exact ties.
* The **score** is a calibrated probability that the best candidate is right:
  ``sigmoid(w0 + w1·strength + w2·margin)`` where ``margin`` is the strength gap to the best
  candidate with another IMDb id. The weights (:data:`CALIBRATION`: a logistic fit of "top-1
  right") and the auto-accept threshold (:data:`AUTO_THRESHOLD`: the lowest score keeping 99.5%
  precision) were fitted on all 8 years of the dev alias maps (``title_map_dev.json`` against a
  catalog of the films in ``yearly_dev.tsv``; aliases whose film is missing from that catalog
  count as wrong answers, so the fit learns to hold back when the right film may be absent).
  These shipped constants are in-sample; ``benchmarks/bench_alias.py`` refits them on half the
  years and reports the other half (cross-year) next to them.
* **decision**: ``auto`` when score ≥ :data:`AUTO_THRESHOLD` and the margin is at least
  :data:`MIN_AUTO_MARGIN` (a tie is never auto-accepted, popularity only orders it), ``review``
  when a candidate exists with strength ≥ :data:`REVIEW_MIN_STRENGTH`, else ``none`` (imdb null). A curated table
  ``{(year, alias): imdb}`` always wins (``decided_by='curated'``; a curated ``None`` / "None"
  means "no IMDb record").

Reason codes on each :class:`AliasSuggestion`: ``curated``, ``exact``, ``headline_form``,
``truncated``, ``fuzzy``, ``reissue``, ``no_candidate``, ``ambiguous`` (runner-up too close).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rapidfuzz import fuzz, process

#: years before / after the Variety year inside which a film counts as current
WINDOW_BEFORE = 3
WINDOW_AFTER = 1
#: strength subtracted for a film released before the window (a reissue)
REISSUE_PENALTY = 0.15
#: a reissue candidate is only considered at or above this full-form similarity (0–1)
REISSUE_MIN = 0.95
#: the calibration of the score: sigmoid(w0 + w1*strength + w2*margin)
CALIBRATION: tuple[float, float, float] = (-25.67, 28.45, 6.55)
#: auto-accept when the calibrated score is at least this
AUTO_THRESHOLD = 0.92
#: auto-accept also needs this strength margin over the runner-up: identical titles in the window
#: (remakes, foreign films of the same name) always go to review, whatever the popularity
MIN_AUTO_MARGIN = 0.02
#: a suggestion under this strength is no suggestion at all (decision ``none``)
REVIEW_MIN_STRENGTH = 0.6
#: aliases seen at least this often in a year are resolved (SPEC B1)
MIN_COUNT = 3
#: candidates kept from the vectorised pre-filter per alias form
PREFILTER_K = 12

ARTICLES = frozenset({"the", "a", "an"})
#: words Variety's headline style drops (plus the articles)
SMALL_WORDS = frozenset({"the", "a", "an", "of", "and", "in", "on", "at", "to", "for", "with", "from", "by", "is"})
_ONES = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
         "sixteen seventeen eighteen nineteen").split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()
_ORDINALS = {"1st": "first", "2nd": "second", "2d": "second", "3rd": "third", "3d": "third", "4th": "fourth",
             "5th": "fifth", "6th": "sixth", "7th": "seventh", "8th": "eighth", "9th": "ninth", "10th": "tenth",
             "11th": "eleventh", "12th": "twelfth", "13th": "thirteenth", "20th": "twentieth"}
_ABBREV = [(re.compile(r"\bn\s*\.?\s*y\b\.?"), " new york "), (re.compile(r"\bl\s*\.\s*a\b\.?"), " los angeles "),
           (re.compile(r"\bmr\b\.?"), " mister "), (re.compile(r"\bmrs\b\.?"), " missus "),
           (re.compile(r"\bdr\b\.?"), " doctor "), (re.compile(r"\bst\b\.?"), " saint "),
           (re.compile(r"\bu\s*\.\s*s\b\.?\s*a?\b\.?"), " usa ")]
_QUOTES = "\"“”„«»‘’‚`´'"
_QUOTED_RE = re.compile(r"[\"“”'‘’]{1,2}([^\"“”‘’]{3,}?)[\"“”'‘’.,]{1,3}\s*$")
_STAR_IN_RE = re.compile(r"^[A-Z][\w.'’-]+(?:\s+[A-Z][\w.'’-]+){1,3},?\s+in\s*[-\"“'‘]\s*(.{3,})$")


# ----------------------------------------------------------------------------------------------
# counting
# ----------------------------------------------------------------------------------------------
def _get(row: Any, key: str) -> Any:
    return row.get(key) if isinstance(row, Mapping) else getattr(row, key, None)


def _year_of(row: Any) -> int | None:
    year = _get(row, "year")
    if year not in (None, ""):
        return int(year)
    date = _get(row, "issue_date")
    if date:
        return int(str(date)[:4])
    return None


def count_aliases(tuples: Iterable[Any]) -> dict[int, Counter[str]]:
    """Per year (``year`` or the year of ``issue_date``), how often each printed ``movie`` occurs.

    ``tuples`` are mappings or objects with ``movie`` and ``year`` or ``issue_date``; rows without
    a movie or a year are not counted. The printed form is kept verbatim (whitespace collapsed).
    """
    out: dict[int, Counter[str]] = defaultdict(Counter)
    for row in tuples:
        movie = _get(row, "movie")
        year = _year_of(row)
        if not movie or year is None:
            continue
        out[year][" ".join(str(movie).split())] += 1
    return dict(out)


def aliases_to_resolve(tuples: Iterable[Any], min_count: int = MIN_COUNT) -> list[tuple[int, str, int]]:
    """``(year, alias, count)`` for every alias seen at least ``min_count`` times in its year,
    sorted by year then descending count then alias."""
    counts = count_aliases(tuples)
    rows = [(y, a, n) for y, c in counts.items() for a, n in c.items() if n >= min_count]
    return sorted(rows, key=lambda r: (r[0], -r[2], r[1]))


# ----------------------------------------------------------------------------------------------
# normalisation
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Forms:
    """Normalised forms of one title (token tuples and strings)."""

    full: str
    content: str
    compact: str
    content_tokens: tuple[str, ...]


def _base(text: str) -> str:
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if not unicodedata.combining(c)).lower()
    text = text.replace("&", " and ")
    for rx, rep in _ABBREV:
        text = rx.sub(rep, text)
    text = re.sub(r"[’‘´`']", "", text)  # apostrophes: don't → dont
    return text


def _tokens(text: str) -> list[str]:
    toks = re.findall(r"[a-z0-9]+", text)
    out: list[str] = []
    run: list[str] = []
    for t in toks + [""]:
        if len(t) == 1 and t.isalpha() and t not in ("a", "i") or (len(t) == 1 and run and t.isalpha()):
            run.append(t)
            continue
        if run:
            out.append("".join(run)) if len(run) > 1 else out.extend(run)
            run = []
        if t:
            out.extend(_number_words(t).split())
    return out


def _number_words(tok: str) -> str:
    """"7" → "seven", "400" → "four hundred", "7th" → "seventh"; years (1900–2099) and other
    tokens unchanged."""
    if tok in _ORDINALS:
        return _ORDINALS[tok]
    if not tok.isdigit() or len(tok) > 4 or (len(tok) == 4 and tok[:2] in ("19", "20")):
        return tok
    n = int(tok)

    def words(n: int) -> list[str]:
        if n < 20:
            return [_ONES[n]]
        if n < 100:
            return [_TENS[n // 10]] + ([_ONES[n % 10]] if n % 10 else [])
        if n < 1000:
            return [_ONES[n // 100], "hundred"] + (words(n % 100) if n % 100 else [])
        return words(n // 1000) + ["thousand"] + (words(n % 1000) if n % 1000 else [])

    return " ".join(words(n))


def _forms_from_tokens(toks: list[str]) -> Forms:
    full = toks[1:] if len(toks) > 1 and toks[0] in ARTICLES else toks
    content = [t for t in full if t not in SMALL_WORDS] or full
    return Forms(" ".join(full), " ".join(content), "".join(content), tuple(content))


def title_forms(title: str) -> list[Forms]:
    """The normalised forms of ``title``: one per hyphen reading (split, joined), de-duplicated."""
    base = _base(title)
    # " - " between words is Variety's headline "and"/"&" ("Abbott - Costello"): a separator
    base = re.sub(r"\s-\s", " ", base)
    readings = [re.sub(r"-", " ", base), re.sub(r"-\s*", "", base)]
    out: list[Forms] = []
    for r in readings:
        f = _forms_from_tokens(_tokens(r))
        if f not in out and f.full:
            out.append(f)
    return out


def alias_variants(alias: str) -> list[str]:
    """The alias plus the readings Variety's habits suggest: the quoted title inside
    (``George Beban, "Sign of the Rose."``) and the title after a star prefix (``X in 'Y'``)."""
    alias = " ".join(alias.split())
    out = [alias]
    stripped = alias.strip(_QUOTES + " .,")
    m = _QUOTED_RE.search(alias)
    if m and m.group(1).strip(_QUOTES + " .,") != stripped:
        out.append(m.group(1))
    m = _STAR_IN_RE.match(alias)
    if m:
        out.append(m.group(1))
    return out


# ----------------------------------------------------------------------------------------------
# catalog and matching
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CatalogEntry:
    imdb: str
    title: str
    year: int | None
    votes: int | None = None


@dataclass(frozen=True)
class AliasSuggestion:
    year: int
    alias: str
    imdb: str | None
    title: str | None
    score: float
    decision: str  # auto | review | none
    margin: float
    strength: float
    runner_up: str | None
    reason: str
    decided_by: str  # curated | suggested

    def to_json(self) -> dict[str, Any]:
        return {"year": self.year, "alias": self.alias, "imdb": self.imdb, "score": round(self.score, 4),
                "decision": self.decision}


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, x))))


def calibrated_score(strength: float, margin: float,
                     calibration: tuple[float, float, float] = CALIBRATION) -> float:
    """P(best candidate is right) from match strength and runner-up margin (both 0–1)."""
    w0, w1, w2 = calibration
    return _sigmoid(w0 + w1 * strength + w2 * margin)


def _contiguous_in(needle: Sequence[str], hay: Sequence[str]) -> int:
    """Start index of ``needle`` as a contiguous run of ``hay`` (token ratio ≥ 88), or -1."""
    n = len(needle)
    for i in range(len(hay) - n + 1):
        if all(a == b or (len(a) > 3 and fuzz.ratio(a, b) >= 88) for a, b in zip(needle, hay[i:i + n])):
            return i
    return -1


def match_strength(alias_forms: Sequence[Forms], title_forms_: Sequence[Forms]) -> tuple[float, str]:
    """How well an alias matches a title, 0–1, with the rule that gave it."""
    best, how = 0.0, "fuzzy"
    for a in alias_forms:
        for t in title_forms_:
            if a.full == t.full or a.full.replace(" ", "") == t.full.replace(" ", ""):
                return 1.0, "exact"
            if a.content == t.content:
                s, h = 0.97, "headline_form"
            else:
                s = max(fuzz.ratio(a.full, t.full), fuzz.ratio(a.content, t.content),
                        fuzz.ratio(a.compact, t.compact)) / 100.0
                h = "fuzzy"
            n_a, n_t = len(a.content_tokens), len(t.content_tokens)
            if n_a < n_t and n_a:
                pos = _contiguous_in(a.content_tokens, t.content_tokens)
                if pos >= 0 or (len(a.compact) >= 4 and a.compact in t.compact):
                    cover = len(a.compact) / max(1, len(t.compact))
                    edge = pos == 0 or pos == n_t - n_a
                    st = 0.80 + 0.12 * cover + (0.03 if edge else 0.0)
                    if st > s:
                        s, h = st, "truncated"
            if s > best:
                best, how = s, h
    return best, how


class AliasResolver:
    """Suggests IMDb records for Variety aliases from a catalog (see the module docstring)."""

    def __init__(self, catalog: Iterable[CatalogEntry | Mapping[str, Any]], *,
                 window_before: int = WINDOW_BEFORE, window_after: int = WINDOW_AFTER,
                 calibration: tuple[float, float, float] = CALIBRATION, auto_threshold: float = AUTO_THRESHOLD,
                 review_min_strength: float = REVIEW_MIN_STRENGTH) -> None:
        entries: list[CatalogEntry] = []
        for e in catalog:
            if not isinstance(e, CatalogEntry):
                year = e.get("year")
                votes = e.get("votes")
                e = CatalogEntry(str(e["imdb"]), str(e["title"]),
                                 int(year) if year not in (None, "", "\\N") else None,
                                 int(votes) if votes not in (None, "", "\\N") else None)
            entries.append(e)
        self.entries = entries
        self.forms = [title_forms(e.title) for e in entries]
        self._content = [f[0].content for f in self.forms]
        self._compact = [f[0].compact for f in self.forms]
        self.window_before, self.window_after = window_before, window_after
        self.calibration, self.auto_threshold = calibration, auto_threshold
        self.review_min_strength = review_min_strength
        self._window_cache: dict[int, tuple[list[int], list[int]]] = {}

    def _split(self, year: int) -> tuple[list[int], list[int]]:
        """(in-window indices, older-than-window indices) for a Variety year."""
        if year not in self._window_cache:
            inside, older = [], []
            for i, e in enumerate(self.entries):
                if e.year is None or year - self.window_before <= e.year <= year + self.window_after:
                    inside.append(i)
                elif e.year < year - self.window_before:
                    older.append(i)
            self._window_cache[year] = (inside, older)
        return self._window_cache[year]

    def candidates(self, alias: str, year: int) -> list[tuple[CatalogEntry, float, str]]:
        """Scored candidates for one alias, best first: (entry, strength, rule)."""
        inside, older = self._split(year)
        a_forms = [f for v in alias_variants(alias) for f in title_forms(v)]
        if not a_forms:
            return []
        pool: set[int] = set()
        for f in a_forms:
            for idx, choices, query, scorer in ((inside, self._content, f.content, fuzz.WRatio),
                                                (inside, self._compact, f.compact, fuzz.ratio),
                                                (inside, self._content, f.content, fuzz.partial_ratio)):
                sub = [choices[i] for i in idx]
                for _, _, k in process.extract(query, sub, scorer=scorer, limit=PREFILTER_K):
                    pool.add(idx[k])
        scored: list[tuple[CatalogEntry, float, str]] = []
        for i in pool:
            s, how = match_strength(a_forms, self.forms[i])
            scored.append((self.entries[i], s, how))
        if older:
            sub = [self._content[i] for i in older]
            for f in a_forms:
                for _, sc, k in process.extract(f.content, sub, scorer=fuzz.ratio, limit=5,
                                                score_cutoff=REISSUE_MIN * 100):
                    i = older[k]
                    s, how = match_strength(a_forms, self.forms[i])
                    if s >= REISSUE_MIN:
                        scored.append((self.entries[i], s - REISSUE_PENALTY, "reissue"))
        best: dict[str, tuple[CatalogEntry, float, str]] = {}
        for e, s, how in scored:
            if e.imdb not in best or s > best[e.imdb][1]:
                best[e.imdb] = (e, s, how)
        # popularity breaks ties; then the closer release year; then the id (deterministic)
        return sorted(best.values(), key=lambda r: (-round(r[1], 6), -(r[0].votes or 0),
                                                     abs(year - (r[0].year or year)), r[0].imdb))

    def resolve(self, alias: str, year: int, curated: Mapping[tuple[int, str], str | None] | None = None
                ) -> AliasSuggestion:
        """The suggestion (or the curated answer) for one alias of one year."""
        if curated is not None:
            key = (int(year), alias)
            if key in curated:
                imdb = curated[key]
                imdb = None if imdb in (None, "", "None") else imdb
                title = next((e.title for e in self.entries if e.imdb == imdb), None)
                return AliasSuggestion(int(year), alias, imdb, title, 1.0, "auto" if imdb else "none", 1.0, 1.0,
                                       None, "curated", "curated")
        cands = self.candidates(alias, int(year))
        if not cands or cands[0][1] < self.review_min_strength:
            return AliasSuggestion(int(year), alias, None, None, 0.0, "none", 0.0, cands[0][1] if cands else 0.0,
                                   None, "no_candidate", "suggested")
        top, strength, how = cands[0]
        runner = cands[1] if len(cands) > 1 else None
        margin = strength - (runner[1] if runner else 0.0)
        score = calibrated_score(strength, margin, self.calibration)
        decision = "auto" if score >= self.auto_threshold and margin >= MIN_AUTO_MARGIN else "review"
        reason = how if decision == "auto" or margin > 0.02 else "ambiguous"
        return AliasSuggestion(int(year), alias, top.imdb, top.title, score, decision, round(margin, 4),
                               round(strength, 4), runner[0].imdb if runner else None, reason, "suggested")


def resolve_aliases(aliases: Iterable[tuple[int, str]], catalog: Iterable[CatalogEntry | Mapping[str, Any]] | AliasResolver,
                    curated: Mapping[tuple[int, str], str | None] | None = None, **kw: Any) -> list[AliasSuggestion]:
    """Resolve ``(year, alias)`` pairs; the ``curated`` table overrides every suggestion."""
    resolver = catalog if isinstance(catalog, AliasResolver) else AliasResolver(catalog, **kw)
    return [resolver.resolve(alias, int(year), curated) for year, alias in aliases]


def curated_table(rows: Iterable[Mapping[str, Any]]) -> dict[tuple[int, str], str | None]:
    """``{(year, alias): imdb}`` from rows with ``year, alias, imdb[, decided_by]``."""
    out: dict[tuple[int, str], str | None] = {}
    for r in rows:
        imdb = r.get("imdb")
        out[(int(r["year"]), str(r["alias"]))] = None if imdb in (None, "", "None") else str(imdb)
    return out


def fit_calibration(samples: Sequence[tuple[float, float, bool]], *, iters: int = 200,
                    l2: float = 1e-3) -> tuple[float, float, float]:
    """Logistic regression of ``correct`` on (strength, margin) by Newton's method (numpy)."""
    import numpy as np

    x = np.array([[1.0, s, m] for s, m, _ in samples])
    y = np.array([1.0 if c else 0.0 for _, _, c in samples])
    w = np.zeros(3)
    for _ in range(iters):
        p = 1 / (1 + np.exp(-np.clip(x @ w, -50, 50)))
        g = x.T @ (p - y) + l2 * w
        h = (x.T * (p * (1 - p))) @ x + l2 * np.eye(3)
        step = np.linalg.solve(h, g)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return float(w[0]), float(w[1]), float(w[2])


def choose_threshold(samples: Sequence[tuple[float, bool]], target_precision: float = 0.995) -> float:
    """The lowest score threshold t whose auto-accepted set (score ≥ t) still reaches
    ``target_precision`` (scanning the scores from the top)."""
    ranked = sorted(samples, key=lambda s: -s[0])
    best = 1.0
    ok = 0
    for n, (score, correct) in enumerate(ranked, 1):
        ok += correct
        if ok / n >= target_precision:
            best = score
    return best


