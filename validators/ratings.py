"""National motion-picture rating normalisation (SPEC A8; seed 000, A.7 and Table 4).

Raw IMDb certificate strings (``UK:12A``, ``United Kingdom:12A::(Blu-ray rating)``,
``Germany:o.Al.``, ``South Korea:18`` ...) become one label per country inside the ten ordered
label spaces of SPEC A8. Every mapping, alias, successor and refusal lives with its reason in
``validators/data/ratings_rules.yaml`` and is listed in ``docs/ratings.md``.

Conventions
-----------
* ``ordinal`` is the **0-based** position of the label in its country's order
  (United States: G=0, PG=1, PG-13=2, R=3, NC-17=4).
* ``minimum_age`` is the youngest age for which the issuing body considers the film suitable
  without an accompanying adult; for advisory labels, the age the label or the body's published
  definition names; 0 when the label admits all ages and names no age.
* Nothing is guessed: TV, platform, game, banned, exempt, unrated and unknown strings come back
  unmapped with a reason code (see :data:`REASONS`).

Only reads its data file; otherwise pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

import yaml

from cinesub.settings import COUNTRIES

RULES_PATH = Path(__file__).resolve().parent / "data" / "ratings_rules.yaml"

#: SPEC A8 country order: the one definition lives in the settings module.
COUNTRY_ORDER: tuple[str, ...] = COUNTRIES

#: Reason codes of unmapped strings.
REASONS: dict[str, str] = {
    "other_country": "country outside the ten SPEC A8 countries",
    "malformed": "not of the form 'Country:Label[::note]', or an empty label",
    "tv_rating": "television rating (TV-* label, TV/episode/season note, or a TV-only label)",
    "platform_rating": "rating applied by a streaming/download platform",
    "game_rating": "video-game (ESRB) rating",
    "unrated": "no rating issued (Not Rated, Unrated)",
    "banned": "banned or refused classification",
    "exempt": "exempt from classification",
    "withdrawn": "certificate withdrawn or surrendered",
    "not_in_label_space": "a real category of that country that lies outside the SPEC A8 space",
    "obsolete_no_successor": "obsolete category without one documented contemporary successor",
    "foreign_label": "another country's label entered on this country's row",
    "unknown_label": "label not known for this country (never guessed)",
}


#: Note priorities (lower wins) and their names, as used in ``RatingResult.resolution``.
PRIORITY_NAMES: dict[int, str] = {0: "rerating", 1: "theatrical", 2: "home_video", 3: "self_applied"}


@dataclass(frozen=True)
class RatingResult:
    """One normalised rating. ``label is None`` (and ``reason`` set) when unmapped."""

    country: str | None
    label: str | None
    minimum_age: int | None
    ordinal: int | None
    rule: str | None
    reason: str | None
    raw: str = ""
    #: how the label was chosen among several entries of the same country
    resolution: str = "single"
    #: raw strings that were mapped candidates for this country (winner included)
    candidates: tuple[str, ...] = ()

    @property
    def mapped(self) -> bool:
        return self.label is not None

    def to_json(self) -> dict[str, Any]:
        """The SPEC A11 ``motionPictureRatings`` item; unmapped adds ``reason`` (label null)."""
        out: dict[str, Any] = {
            "country": self.country,
            "label": self.label,
            "minimumAge": self.minimum_age,
            "ordinal": self.ordinal,
        }
        if self.label is None:
            out["reason"] = self.reason
        return out


@dataclass(frozen=True)
class Unmapped:
    """A raw certificate string that maps to no label (the ``unmapped`` table row)."""

    raw: str
    country: str | None
    reason: str
    rule: str | None = None


@dataclass(frozen=True)
class _Label:
    label: str
    minimum_age: int
    ordinal: int


@dataclass
class _Rules:
    version: Any
    aliases: dict[str, str]
    labels: dict[str, list[_Label]]
    # country -> normalised raw -> (label, rule id)
    mapped: dict[str, dict[str, tuple[str, str]]]
    # country -> normalised raw -> (reason, rule id)
    refused: dict[str, dict[str, tuple[str, str]]]
    any_refused: dict[str, tuple[str, str]]
    tv_label: re.Pattern[str]
    notes: list[dict[str, Any]] = field(default_factory=list)
    no_note_priority: int = 1
    unknown_note_priority: int = 2
    rules: list[dict[str, Any]] = field(default_factory=list)


def _key(text: str) -> str:
    """Comparison key: trimmed, internal whitespace collapsed, case-folded."""
    return " ".join(text.split()).casefold()


def _refusals(rule: dict[str, Any]) -> list[tuple[str, Any, tuple[str, str]]]:
    """(key, raw, (reason, rule id)) per raw label of one ``unmapped`` rule; its reason must be known."""
    if rule["reason"] not in REASONS:
        raise ValueError(f"rule {rule['id']}: unknown reason {rule['reason']!r}")
    return [(_key(str(raw)), raw, (rule["reason"], rule["id"])) for raw in rule["raw"]]


@lru_cache(maxsize=1)
def load_rules(path: str | None = None) -> _Rules:
    data = yaml.safe_load(Path(path or RULES_PATH).read_text(encoding="utf-8"))
    if data.get("ordinal_base") != 0:
        raise ValueError("ratings_rules.yaml: only ordinal_base 0 is supported")
    aliases = {_key(k): v for k, v in data["country_aliases"].items()}
    labels: dict[str, list[_Label]] = {}
    mapped: dict[str, dict[str, tuple[str, str]]] = {}
    refused: dict[str, dict[str, tuple[str, str]]] = {}
    all_rules: list[dict[str, Any]] = []
    if set(data["countries"]) != set(COUNTRY_ORDER):
        raise ValueError("ratings_rules.yaml must define exactly the ten SPEC A8 countries")
    for country in COUNTRY_ORDER:
        spec = data["countries"][country]
        space = [
            _Label(str(item["label"]), int(item["minimum_age"]), pos)
            for pos, item in enumerate(spec["labels"])
        ]
        labels[country] = space
        table: dict[str, tuple[str, str]] = {}
        for item in space:
            table[_key(item.label)] = (item.label, "canonical")
        names = {item.label for item in space}
        for rule in spec.get("rules") or []:
            if str(rule["label"]) not in names:
                raise ValueError(f"rule {rule['id']}: {rule['label']!r} is not a {country} label")
            for raw in rule["raw"]:
                k = _key(str(raw))
                if k in table:
                    raise ValueError(f"rule {rule['id']}: {raw!r} already mapped for {country}")
                table[k] = (str(rule["label"]), rule["id"])
            all_rules.append({**rule, "country": country})
        mapped[country] = table
        ref: dict[str, tuple[str, str]] = {}
        for rule in spec.get("unmapped") or []:
            for k, raw, why in _refusals(rule):
                if k in table or k in ref:
                    raise ValueError(f"rule {rule['id']}: {raw!r} listed twice for {country}")
                ref[k] = why
            all_rules.append({**rule, "country": country})
        refused[country] = ref
    any_refused: dict[str, tuple[str, str]] = {}
    for rule in data.get("any_country_unmapped") or []:
        any_refused.update((k, why) for k, _, why in _refusals(rule))
        all_rules.append({**rule, "country": "*"})
    notes = []
    for note in data.get("notes") or []:
        if "reject" in note and note["reject"] not in REASONS:
            raise ValueError(f"note rule {note['id']}: unknown reason {note['reject']!r}")
        notes.append({**note, "regex": re.compile(note["pattern"], re.IGNORECASE)})
        all_rules.append(note)
    return _Rules(
        version=data.get("version"),
        aliases=aliases,
        labels=labels,
        mapped=mapped,
        refused=refused,
        any_refused=any_refused,
        tv_label=re.compile(data["tv_label_pattern"], re.IGNORECASE),
        notes=notes,
        no_note_priority=int(data.get("no_note_priority", 1)),
        unknown_note_priority=int(data.get("unknown_note_priority", 2)),
        rules=all_rules,
    )


# ------------------------------------------------------------------------------------------
# helpers
# ------------------------------------------------------------------------------------------
def canonical_country(name: str | None) -> str | None:
    """SPEC A8 country for an IMDb country name (old or new), else None."""
    if not name:
        return None
    return load_rules().aliases.get(_key(name))


def label_space(country: str) -> list[str]:
    """The ordered labels of a SPEC A8 country (index = ordinal)."""
    c = canonical_country(country)
    if c is None:
        raise KeyError(country)
    return [item.label for item in load_rules().labels[c]]


def split_certificate(raw: str) -> tuple[str, str, str | None] | None:
    """``'UK:12A::(Blu-ray rating)'`` -> ``('UK', '12A', '(Blu-ray rating)')``; None if malformed."""
    text = raw.strip()
    note: str | None = None
    if "::" in text:
        text, note = text.split("::", 1)
        note = note.strip() or None
    if ":" not in text:
        return None
    country, label = text.split(":", 1)
    country, label = country.strip(), label.strip()
    if not country or not label:
        return None
    return country, label, note


def _note_class(note: str | None) -> tuple[str | None, int | None, str | None]:
    """(reject reason, priority, note rule id) for a note."""
    rules = load_rules()
    if not note:
        return None, rules.no_note_priority, None
    for item in rules.notes:
        if item["regex"].search(note):
            if "reject" in item:
                return item["reject"], None, item["id"]
            return None, int(item["priority"]), item["id"]
    return None, rules.unknown_note_priority, "note_unknown"


def _label_lookup(country: str, label: str) -> tuple[_Label | None, str | None, str]:
    """(label, None, rule) when mapped; (None, reason, rule) when not."""
    rules = load_rules()
    k = _key(label)
    hit = rules.mapped[country].get(k)
    if hit is not None:
        target, rule_id = hit
        item = next(x for x in rules.labels[country] if x.label == target)
        return item, None, rule_id
    ref = rules.refused[country].get(k)
    if ref is not None:
        return None, ref[0], ref[1]
    ref = rules.any_refused.get(k)
    if ref is not None:
        return None, ref[0], ref[1]
    if rules.tv_label.search(label.strip()):
        return None, "tv_rating", "tv_label"
    return None, "unknown_label", "unknown"


# ------------------------------------------------------------------------------------------
# public API
# ------------------------------------------------------------------------------------------
def normalize(country: str, raw: str) -> RatingResult:
    """Normalise one label of one country.

    ``country`` may be a SPEC A8 name or an IMDb name (``UK``, ``USA``, ``West Germany``);
    ``raw`` is the label, optionally followed by an IMDb note (``'12::(DVD rating)'``).
    A full certificate string (``'UK:12A'``) is accepted when ``country`` is empty.
    """
    raw_in = raw
    if not country:
        parts = split_certificate(raw)
        if parts is None:
            return RatingResult(None, None, None, None, None, "malformed", raw=raw_in)
        country, label, note = parts
    else:
        label, note = raw, None
        if "::" in raw:
            label, note = raw.split("::", 1)
            note = note.strip() or None
        label = label.strip()
    target = canonical_country(country)
    if target is None:
        return RatingResult(country, None, None, None, None, "other_country", raw=raw_in)
    if not label:
        return RatingResult(target, None, None, None, None, "malformed", raw=raw_in)
    item, reason, rule_id = _label_lookup(target, label)
    if item is None:
        return RatingResult(target, None, None, None, rule_id, reason, raw=raw_in)
    reject, _priority, note_rule = _note_class(note)
    if reject is not None:
        return RatingResult(target, None, None, None, note_rule, reject, raw=raw_in)
    return RatingResult(
        target, item.label, item.minimum_age, item.ordinal, rule_id, None, raw=raw_in,
        candidates=(raw_in,),
    )


def normalize_certificates(raw_list: Iterable[str]) -> tuple[list[RatingResult], list[Unmapped]]:
    """All IMDb certificate strings of one film -> (one result per country, unmapped strings).

    Results come in SPEC A8 order, one per target country that has at least one mapped entry.
    Several entries of one country resolve to one label: the entry with the lowest note priority
    wins (0 re-rating, 1 no note / theatrical, 2 home video / edition / festival / unknown note,
    3 self-applied); among equals the most restrictive label (highest ordinal). Every string
    that contributes no candidate is returned in ``unmapped`` with its reason, in input order.
    """
    unmapped: list[Unmapped] = []
    per_country: dict[str, list[tuple[int, int, int, str, _Label, str]]] = {}
    for pos, raw in enumerate(raw_list):
        parts = split_certificate(raw) if isinstance(raw, str) else None
        if parts is None:
            unmapped.append(Unmapped(str(raw), None, "malformed"))
            continue
        country_name, label, note = parts
        target = canonical_country(country_name)
        if target is None:
            unmapped.append(Unmapped(raw, country_name, "other_country"))
            continue
        item, reason, rule_id = _label_lookup(target, label)
        if item is None:
            unmapped.append(Unmapped(raw, target, reason or "unknown_label", rule_id))
            continue
        reject, priority, note_rule = _note_class(note)
        if reject is not None:
            unmapped.append(Unmapped(raw, target, reject, note_rule))
            continue
        per_country.setdefault(target, []).append(
            (int(priority if priority is not None else 2), -item.ordinal, pos, raw, item, rule_id)
        )
    results: list[RatingResult] = []
    for country in COUNTRY_ORDER:
        cands = per_country.get(country)
        if not cands:
            continue
        best = min(cands)
        priority, _neg, _pos, raw, item, rule_id = best
        labels = {c[4].label for c in cands}
        if len(cands) == 1:
            resolution = "single"
        elif len(labels) == 1:
            resolution = "agree"
        else:
            top = [c for c in cands if c[0] == priority]
            if len({c[4].label for c in top}) > 1:
                resolution = "most_restrictive"
            else:
                resolution = f"preferred_{PRIORITY_NAMES.get(priority, priority)}"
        results.append(
            RatingResult(
                country, item.label, item.minimum_age, item.ordinal, rule_id, None, raw=raw,
                resolution=resolution, candidates=tuple(c[3] for c in sorted(cands, key=lambda c: c[2])),
            )
        )
    return results, unmapped


def order_ratings(results: Iterable[RatingResult | dict[str, Any]]) -> list:
    """Sort ratings (results or ``{"country": ...}`` dicts) into SPEC A8 country order.

    Countries outside the ten go last, in their input order; the sort is stable.
    """
    rank = {c: i for i, c in enumerate(COUNTRY_ORDER)}

    def country_of(item: Any) -> str | None:
        name = item.get("country") if isinstance(item, dict) else getattr(item, "country", None)
        return canonical_country(name) if name else None

    items = list(results)
    return sorted(items, key=lambda it: rank.get(country_of(it) or "", len(rank)))


def rating_to_json(result: RatingResult) -> dict[str, Any]:
    """``{"country","label","minimumAge","ordinal"}`` (plus ``reason`` when unmapped)."""
    return result.to_json()


def rules_version() -> Any:
    return load_rules().version


def all_rule_ids() -> list[str]:
    """Every rule id of the data file (mapping, refusal and note rules)."""
    return [r["id"] for r in load_rules().rules]
