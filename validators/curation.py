"""Task-reference curation (SPEC A10; seed 000, Appendix A.7).

* :func:`clean_reference` removes material external to the film narrative — production history,
  remake and franchise notes, database editorial text — from ``plot``, ``synopsis`` and
  ``storyline``, sentence by sentence, with the versioned rules of
  ``validators/data/curation_rules.yaml`` (each rule with positive and negative examples). The raw
  text is never modified: a :class:`CurationResult` keeps ``raw`` and ``clean`` side by side, with
  every removed span (offsets into ``raw``), the rule that removed it and why.
* :func:`completeness` applies the complete-coverage rule: a task field is kept only when it is
  non-empty (after cleaning, for the curated fields) for every film of the final cohort — taglines
  were dropped that way (946 of 1,012 films).

Pure: besides reading the rules file, no I/O. Documented in ``docs/curation.md``.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

import yaml

RULES_PATH = Path(__file__).resolve().parent / "data" / "curation_rules.yaml"

#: The narrative reference fields that are cleaned (SPEC A10).
CURATED_FIELDS: tuple[str, ...] = ("plot", "synopsis", "storyline")

RULE_KINDS: tuple[str, ...] = ("sentence", "prefix", "tail")

#: statuses of a :class:`CurationResult`
STATUS_MISSING = "missing"      # no text (None / blank)
STATUS_UNCHANGED = "unchanged"  # nothing removed
STATUS_CLEANED = "cleaned"      # something removed, narrative left
STATUS_EMPTIED = "emptied"      # everything removed: the field is empty after cleaning

#: words after which a period does not end a sentence
_ABBREVIATIONS = frozenset(
    "mr mrs ms dr st jr sr prof gen col capt lt sgt rev hon gov sen rep pres vs etc no vol ft mt "
    "inc ltd co corp bros dept est approx fig jan feb mar apr jun jul aug sep sept oct nov dec".split()
)
_BOUNDARY = re.compile(r"""[.!?…]+["”’')\]]*(?=\s)|\n\s*\n|\n""")
_NEXT_START = re.compile(r"""\s*["“‘'(\[]?[A-Z0-9À-ÖØ-Þ—–-]""")


@dataclass(frozen=True)
class Rule:
    id: str
    kind: str
    category: str
    reason: str
    regex: re.Pattern[str]
    positive: tuple[str, ...]
    negative: tuple[str, ...]


@dataclass(frozen=True)
class RuleSet:
    version: str
    rules: tuple[Rule, ...]

    def of_kind(self, kind: str) -> tuple[Rule, ...]:
        return tuple(r for r in self.rules if r.kind == kind)


@dataclass(frozen=True)
class CurationResult:
    """One curated field. ``raw`` is the source text exactly as given; ``clean`` the text the
    benchmark uses; ``removed`` one dict per removed span: ``{span: [start, end], text, rule,
    category, reason}`` with offsets into ``raw`` (``raw[start:end] == text``)."""

    field: str
    raw: str | None
    clean: str
    removed: list[dict[str, Any]]
    status: str
    rules_version: str
    method: str = "rules"

    @property
    def changed(self) -> bool:
        return bool(self.removed)

    def to_record(self, film_id: Any) -> dict[str, Any]:
        """A row of the curation table (raw kept for traceability, SPEC A10)."""
        return {
            "id": film_id,
            "field": self.field,
            "raw": self.raw,
            "rawSha256": hashlib.sha256((self.raw or "").encode("utf-8")).hexdigest(),
            "clean": self.clean,
            "removed": [dict(r) for r in self.removed],
            "status": self.status,
            "rulesVersion": self.rules_version,
            "method": self.method,
        }


# --------------------------------------------------------------------------------------------
# rules
# --------------------------------------------------------------------------------------------
def _compile(item: dict[str, Any]) -> Rule:
    for key in ("id", "kind", "category", "reason", "regex"):
        if not item.get(key):
            raise ValueError(f"curation rule {item.get('id')!r}: missing {key!r}")
    if item["kind"] not in RULE_KINDS:
        raise ValueError(f"curation rule {item['id']!r}: unknown kind {item['kind']!r}")
    try:
        rx = re.compile(item["regex"])
    except re.error as exc:
        raise ValueError(f"curation rule {item['id']!r}: bad regex: {exc}") from exc
    positive = tuple(str(s) for s in item.get("positive") or ())
    negative = tuple(str(s) for s in item.get("negative") or ())
    if not positive or not negative:
        raise ValueError(f"curation rule {item['id']!r}: needs positive and negative examples")
    return Rule(item["id"], item["kind"], item["category"], str(item["reason"]), rx, positive, negative)


def load_rules(path: Path | str | None = None) -> RuleSet:
    p = Path(path) if path is not None else RULES_PATH
    data = yaml.safe_load(p.read_text(encoding="utf-8"))
    version = str(data.get("version") or "")
    if not re.fullmatch(r"\d+\.\d+\.\d+", version):
        raise ValueError(f"{p}: version must be semantic (x.y.z), got {version!r}")
    rules = tuple(_compile(item) for item in data.get("rules") or ())
    ids = [r.id for r in rules]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{p}: duplicate rule ids")
    return RuleSet(version, rules)


@lru_cache(maxsize=1)
def default_rules() -> RuleSet:
    return load_rules()


def rules_version() -> str:
    return default_rules().version


# --------------------------------------------------------------------------------------------
# sentences
# --------------------------------------------------------------------------------------------
def split_sentences(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Sentence spans ``(s, e)`` of ``text[start:end]`` (offsets into ``text``); each span starts
    at the sentence's first non-space character and ends right after its closing punctuation.
    A period after a known abbreviation or a single capital initial does not end a sentence."""
    end = len(text) if end is None else end
    spans: list[tuple[int, int]] = []
    seg_start = start
    pos = start
    while pos < end:
        m = _BOUNDARY.search(text, pos, end)
        if m is None:
            break
        cut = m.end()
        token = m.group(0)
        if "\n" not in token:
            # "Mr. Smith", "J. R. R. Tolkien", "U.S. Army": not a boundary
            word = re.search(r"([\w.]+)$", text[seg_start:m.start()])
            w = (word.group(1) if word else "").lower().rstrip(".")
            if token.startswith(".") and (w in _ABBREVIATIONS or re.fullmatch(r"[a-z]|(?:[a-z]\.)+[a-z]", w)):
                pos = cut
                continue
            if not _NEXT_START.match(text, cut, end):  # "... and then. but" / end of text
                if cut < end:
                    pos = cut
                    continue
        spans.append((seg_start, cut))
        seg_start = cut
        pos = cut
    spans.append((seg_start, end))
    out = []
    for s, e in spans:
        seg = text[s:e]
        lead = len(seg) - len(seg.lstrip())
        trail = len(seg) - len(seg.rstrip())
        if seg.strip():
            out.append((s + lead, e - trail))
    return out


def _tidy(text: str) -> str:
    text = re.sub(r"[ \t]+", " ", text)
    text = re.sub(r" *\n *", "\n", text)
    text = re.sub(r"\n{3,}", "\n\n", text)
    return text.strip()


# --------------------------------------------------------------------------------------------
# cleaning
# --------------------------------------------------------------------------------------------
def _removal(raw: str, s: int, e: int, rule: Rule) -> dict[str, Any]:
    return {"span": [s, e], "text": raw[s:e], "rule": rule.id, "category": rule.category, "reason": rule.reason}


def clean_reference(field: str, text: str | None, *, rules: RuleSet | None = None) -> CurationResult:
    """Clean one narrative reference field (``plot``, ``synopsis`` or ``storyline``).

    Order: ``prefix`` rules at the start of the text, ``tail`` rules at its end (repeatedly), then
    ``sentence`` rules on every sentence in between (the first rule that fires removes the whole
    sentence). ``text`` itself is never changed; the result keeps it as ``raw``."""
    if field not in CURATED_FIELDS:
        raise ValueError(f"unknown curated field {field!r}; expected one of {CURATED_FIELDS}")
    rs = rules or default_rules()
    if text is None or not str(text).strip():
        return CurationResult(field, text, "", [], STATUS_MISSING, rs.version)
    raw = str(text)
    removed: list[dict[str, Any]] = []
    lo, hi = 0, len(raw.rstrip())

    for rule in rs.of_kind("prefix"):
        m = rule.regex.match(raw, lo, hi)
        if m and m.end() > m.start() and raw[m.start():m.end()].strip():
            seg = m.group(0)
            removed.append(_removal(raw, m.start() + (len(seg) - len(seg.lstrip())), m.start() + len(seg.rstrip()), rule))
            lo = m.end()

    changed = True
    while changed and lo < hi:
        changed = False
        for rule in rs.of_kind("tail"):
            m = rule.regex.search(raw[:hi], lo)
            if m and m.end() == hi and raw[m.start():m.end()].strip():
                seg = raw[m.start():m.end()]
                s = m.start() + (len(seg) - len(seg.lstrip()))
                e = m.start() + len(seg.rstrip())
                # a tail must leave something before it, or be the whole (editorial-only) text
                removed.append(_removal(raw, s, e, rule))
                hi = m.start()
                changed = True
                break

    kept: list[tuple[int, int]] = []
    sentence_rules = rs.of_kind("sentence")
    for s, e in split_sentences(raw, lo, hi):
        sentence = raw[s:e]
        hit = next((r for r in sentence_rules if r.regex.search(sentence)), None)
        if hit is None:
            kept.append((s, e))
        else:
            removed.append(_removal(raw, s, e, hit))

    # the clean text keeps the original separators between kept sentences (paragraph breaks too)
    pieces: list[str] = []
    for i, (s, e) in enumerate(kept):
        if i:
            gap = raw[kept[i - 1][1]:s]
            pieces.append("\n\n" if gap.count("\n") >= 2 else ("\n" if "\n" in gap else " "))
        pieces.append(raw[s:e])
    clean = _tidy("".join(pieces))
    removed.sort(key=lambda r: r["span"][0])
    if not removed:
        status = STATUS_UNCHANGED
        clean = _tidy(raw)
    else:
        status = STATUS_CLEANED if clean else STATUS_EMPTIED
    return CurationResult(field, raw, clean, removed, status, rs.version)


def curate_record(record: dict[str, Any], fields: Iterable[str] = CURATED_FIELDS,
                  *, rules: RuleSet | None = None) -> dict[str, CurationResult]:
    """The curation results of one film record's narrative fields (the record is not modified)."""
    return {f: clean_reference(f, record.get(f), rules=rules) for f in fields}


# --------------------------------------------------------------------------------------------
# completeness
# --------------------------------------------------------------------------------------------
def _present(field: str, value: Any, rules: RuleSet | None) -> bool:
    if field in CURATED_FIELDS:
        if isinstance(value, CurationResult):
            return bool(value.clean.strip())
        return bool(clean_reference(field, value if isinstance(value, str) or value is None else str(value),
                                    rules=rules).clean.strip())
    from validators.task_fills import present

    return present(value)


def completeness(records: list[dict[str, Any]], fields: list[str], *, id_key: str = "id",
                 rules: RuleSet | None = None) -> dict[str, dict[str, Any]]:
    """SPEC A10's complete-coverage rule over the final cohort ``records``.

    For each field: ``present`` = films whose value is non-empty (after cleaning, for ``plot``,
    ``synopsis`` and ``storyline``; a :class:`CurationResult` may be given in place of the text),
    ``missing`` = the ids of the others (in cohort order), ``kept`` = every film has it. An empty
    cohort keeps nothing. ``total`` = cohort size."""
    out: dict[str, dict[str, Any]] = {}
    for f in fields:
        missing = [r.get(id_key) for r in records if not _present(f, r.get(f), rules)]
        present = len(records) - len(missing)
        out[f] = {"kept": bool(records) and not missing, "present": present, "missing": missing,
                  "total": len(records)}
    return out


def kept_fields(report: dict[str, dict[str, Any]]) -> list[str]:
    return [f for f, r in report.items() if r["kept"]]
