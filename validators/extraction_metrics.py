"""Box-office extraction accuracy against hand-labelled gold pages (SPEC B1; paper 003 Appendix B).

Per issue, gold and predicted tuples {theater, city, movie, week, gross} are compared with three
metrics, then averaged over issues (each issue weighs the same) with 95% bootstrap intervals:

* **Spearman ρ** between gold and predicted per-movie totals, over the movies present in both.
  As in Appendix B, a movie is identified by the same title → IMDb mapping on both sides (the
  optional ``aliases`` argument; without it, or for an unmapped title, by its lower-cased title)
  and its total is the plain sum of every gross reported for it in the issue (all tuples with a
  gross; no last-week, country or shared-gross rules — those belong to the yearly ranking of
  sql/boxoffice_*.sql; ``weeks=`` restricts the totals and movie sets to some week values).
  ρ is ``scipy.stats.spearmanr`` (average ranks for ties). It is undefined — null with a reason,
  left out of the average and counted — with fewer than 2 shared movies
  (``fewer_than_2_shared_movies``) or when either side's shared totals are all equal
  (``constant_totals``).
* **Movie F1**: precision = predicted movies present in gold / predicted movies, recall = gold
  movies present in the prediction / gold movies; a movie is any key seen in a tuple (with or
  without a gross). F1 = 2·|G∩P| / (|G|+|P|), which equals 2PR/(P+R) and is 0 when one side is
  empty; with both sides empty it is null (``no_movies``). A precision or recall with an empty
  denominator is null (``no_pred_movies`` / ``no_gold_movies``).
* **Tuple F1** (exact tuples): a tuple matches when theater, city, movie, week and gross are all
  equal after light normalisation — text case-folded, surrounding whitespace stripped, inner
  whitespace runs collapsed to one space; gross compared as an integer (``$``, ``,`` and spaces
  dropped, ``12000.0`` = ``12000``) or both null. The paper names movie, theater, city and gross;
  the week is added because every extractor emits it and a last-week figure read as this week's
  is a different fact. Matching is on multisets (a tuple printed twice must be found twice):
  matches = Σ min(gold count, predicted count). Precision, recall and F1 as for movies
  (``no_tuples``, ``no_pred_tuples``, ``no_gold_tuples``).

Averages: the mean over the issues where the metric is defined; the 95% interval is the
percentile interval (2.5th, 97.5th) of ``n_boot`` means of issues resampled with replacement
(numpy ``default_rng(seed)``; the same seed for every metric, so results are repeatable).

Issues present on one side only are never dropped silently: they are listed under ``missing``
with ``missing_pred`` or ``missing_gold``. A gold issue without predictions is not scored unless
``missing_pred_as_empty=True`` (then it is scored as an empty prediction). In
:func:`evaluate_dirs` an empty prediction file is an issue with zero predicted tuples (scored);
an absent file is a missing issue. Pure: no I/O except :func:`evaluate_dirs` reading its two
folders.
"""

from __future__ import annotations

import csv
import json
import math
import re
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import spearmanr

TUPLE_FIELDS = ("theater", "city", "movie", "week", "gross")
#: columns naming the issue of a tuple in :func:`evaluate`, tried in this order
ISSUE_COLUMNS = ("issue", "issue_date", "item_id")
#: metrics averaged over issues (each with a bootstrap interval)
METRICS = ("spearman", "movie_f1", "tuple_f1", "movie_precision", "movie_recall",
           "tuple_precision", "tuple_recall")
CONFIDENCE = 0.95
FILE_SUFFIXES = (".jsonl", ".tsv")

_WS = re.compile(r"\s+")
_GROSS_JUNK = re.compile(r"[$,\s]")


# ---------------------------------------------------------------------------------------------
# normalisation


def norm_text(value: Any) -> str:
    """Case-folded, trimmed, inner whitespace collapsed; None → ''."""
    if value is None:
        return ""
    return _WS.sub(" ", str(value)).strip().casefold()


def parse_gross(value: Any) -> int | None:
    """A gross as an int: None, '', 'null', 'none', 'nan' → None; '$12,000' / 12000.0 → 12000.

    Raises ValueError for anything else (a fractional or non-numeric gross is a data error).
    """
    if isinstance(value, bool):
        raise ValueError(f"gross is a boolean: {value!r}")
    if value is None:
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if math.isnan(value):
            return None
        if not value.is_integer():
            raise ValueError(f"gross is not a whole number: {value!r}")
        return int(value)
    text = _GROSS_JUNK.sub("", str(value))
    if text.casefold() in ("", "null", "none", "nan", "\\n"):
        return None
    try:
        number = float(text)
    except ValueError:
        raise ValueError(f"gross is not a number: {value!r}") from None
    if not number.is_integer():
        raise ValueError(f"gross is not a whole number: {value!r}")
    return int(number)


def movie_key(title: Any, aliases: Mapping[str, str] | None = None) -> str:
    """The IMDb id ``aliases`` gives the title, else the lower-cased title (trimmed, whitespace
    collapsed). ``aliases`` keys must already be :func:`norm_text`-normalised (as
    :func:`score_issue` prepares them)."""
    key = norm_text(title)
    if aliases:
        imdb = aliases.get(key)
        if imdb:
            return imdb
    return key


def _norm_aliases(aliases: Mapping[str, str] | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for alias, imdb in (aliases or {}).items():
        if imdb is None or not str(imdb).strip() or str(imdb).strip() == "None":
            continue
        out.setdefault(norm_text(alias), str(imdb).strip())
    return out


def tuple_signature(row: Mapping[str, Any]) -> tuple[str, str, str, str, int | None]:
    """The normalised (theater, city, movie, week, gross) that exact Tuple F1 compares."""
    return (norm_text(row.get("theater")), norm_text(row.get("city")), norm_text(row.get("movie")),
            norm_text(row.get("week")), parse_gross(row.get("gross")))


# ---------------------------------------------------------------------------------------------
# per issue


def _f1(tp: int, n_gold: int, n_pred: int, unit: str) -> dict[str, Any]:
    """Precision, recall, F1 = 2·tp/(n_gold+n_pred), each with the reason when undefined."""
    return {
        "precision": tp / n_pred if n_pred else None,
        "precision_reason": None if n_pred else f"no_pred_{unit}",
        "recall": tp / n_gold if n_gold else None,
        "recall_reason": None if n_gold else f"no_gold_{unit}",
        "f1": 2 * tp / (n_gold + n_pred) if (n_gold + n_pred) else None,
        "f1_reason": None if (n_gold + n_pred) else f"no_{unit}",
    }


def movie_totals(rows: Iterable[Mapping[str, Any]], aliases: Mapping[str, str] | None = None,
                 weeks: Collection[str] | None = None) -> tuple[set[str], dict[str, float]]:
    """(movies seen, per-movie sum of gross) of one issue's tuples (``aliases`` keys already
    normalised)."""
    wanted = None if weeks is None else {norm_text(w) for w in weeks}
    movies: set[str] = set()
    totals: dict[str, float] = {}
    for row in rows:
        if wanted is not None and norm_text(row.get("week")) not in wanted:
            continue
        key = movie_key(row.get("movie"), aliases)
        movies.add(key)
        gross = parse_gross(row.get("gross"))
        if gross is not None:
            totals[key] = totals.get(key, 0.0) + gross
    return movies, totals


def score_issue(gold: Sequence[Mapping[str, Any]], pred: Sequence[Mapping[str, Any]], *,
                aliases: Mapping[str, str] | None = None,
                weeks: Collection[str] | None = None) -> dict[str, Any]:
    """The three metrics (with precision, recall and counts) for one issue."""
    amap = _norm_aliases(aliases)
    gold_movies, gold_totals = movie_totals(gold, amap, weeks)
    pred_movies, pred_totals = movie_totals(pred, amap, weeks)

    shared = sorted(set(gold_totals) & set(pred_totals))
    rho: float | None = None
    rho_reason: str | None = None
    if len(shared) < 2:
        rho_reason = "fewer_than_2_shared_movies"
    else:
        g = [gold_totals[k] for k in shared]
        p = [pred_totals[k] for k in shared]
        if len(set(g)) < 2 or len(set(p)) < 2:
            rho_reason = "constant_totals"
        else:
            value = float(spearmanr(g, p).statistic)
            if math.isnan(value):  # pragma: no cover - guarded above
                rho_reason = "constant_totals"
            else:
                rho = value

    movie = _f1(len(gold_movies & pred_movies), len(gold_movies), len(pred_movies), "movies")
    gold_sigs = Counter(tuple_signature(r) for r in gold)
    pred_sigs = Counter(tuple_signature(r) for r in pred)
    matched = sum((gold_sigs & pred_sigs).values())
    tup = _f1(matched, len(gold), len(pred), "tuples")
    out: dict[str, Any] = {
        "n_gold_tuples": len(gold), "n_pred_tuples": len(pred), "n_tuple_matches": matched,
        "n_gold_movies": len(gold_movies), "n_pred_movies": len(pred_movies),
        "n_shared_movies": len(gold_movies & pred_movies), "n_rho_movies": len(shared),
        "spearman": rho, "spearman_reason": rho_reason,
    }
    for prefix, scores in (("movie", movie), ("tuple", tup)):
        for name in ("precision", "recall", "f1"):
            out[f"{prefix}_{name}"] = scores[name]
            out[f"{prefix}_{name}_reason"] = scores[f"{name}_reason"]
    return out


# ---------------------------------------------------------------------------------------------
# averaging


def bootstrap_mean_ci(values: Sequence[float], *, n_boot: int = 1000, seed: int = 0,
                      confidence: float = CONFIDENCE
                      ) -> tuple[float | None, float | None, float | None]:
    """(mean, low, high): the percentile interval of ``n_boot`` means of ``values`` resampled
    with replacement; (None, None, None) for no values."""
    if not values:
        return None, None, None
    arr = np.asarray(values, dtype=float)
    mean = float(arr.mean())
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(arr), size=(n_boot, len(arr)))
    means = arr[idx].mean(axis=1)
    alpha = (1.0 - confidence) / 2.0
    low, high = np.percentile(means, [100 * alpha, 100 * (1 - alpha)])
    # 12 decimals: percentile interpolation of equal means must not print 0.9999999999999999
    return round(mean, 12), round(float(low), 12), round(float(high), 12)


def _summarise(per_issue: list[dict[str, Any]], n_boot: int, seed: int) -> dict[str, Any]:
    summary: dict[str, Any] = {}
    for metric in METRICS:
        values, excluded = [], []
        for row in per_issue:
            if row[metric] is None:
                excluded.append({"issue": row["issue"], "reason": row[f"{metric}_reason"]})
            else:
                values.append(row[metric])
        mean, low, high = bootstrap_mean_ci(values, n_boot=n_boot, seed=seed)
        summary[metric] = {"mean": mean, "ci_low": low, "ci_high": high,
                           "n_issues": len(values), "n_excluded": len(excluded),
                           "excluded": excluded}
    return summary


def _evaluate_grouped(gold: Mapping[str, list[Mapping[str, Any]]],
                      pred: Mapping[str, list[Mapping[str, Any]]], *, n_boot: int, seed: int,
                      aliases: Mapping[str, str] | None, weeks: Collection[str] | None,
                      missing_pred_as_empty: bool) -> dict[str, Any]:
    if not isinstance(n_boot, int) or isinstance(n_boot, bool) or n_boot < 1:
        raise ValueError(f"n_boot must be a positive int, got {n_boot!r}")
    missing = ([{"issue": i, "reason": "missing_pred"} for i in sorted(set(gold) - set(pred))]
               + [{"issue": i, "reason": "missing_gold"} for i in sorted(set(pred) - set(gold))])
    scored = sorted(set(gold) & set(pred))
    if missing_pred_as_empty:
        scored = sorted(set(gold))
    per_issue = []
    for issue in scored:
        row = {"issue": issue}
        row.update(score_issue(gold[issue], pred.get(issue, []), aliases=aliases, weeks=weeks))
        per_issue.append(row)
    return {
        "per_issue": per_issue,
        "summary": _summarise(per_issue, n_boot, seed),
        "missing": missing,
        "n_issues_scored": len(per_issue),
        "n_gold_tuples": sum(r["n_gold_tuples"] for r in per_issue),
        "n_pred_tuples": sum(r["n_pred_tuples"] for r in per_issue),
        "n_boot": n_boot, "seed": seed, "confidence": CONFIDENCE,
        "missing_pred_as_empty": missing_pred_as_empty,
    }


def _rows(data: Any) -> list[dict[str, Any]]:
    if hasattr(data, "to_dicts"):  # polars.DataFrame
        return data.to_dicts()
    return [dict(r) for r in data]


def _issue_column(*sides: list[dict[str, Any]]) -> str | None:
    for col in ISSUE_COLUMNS:
        if any(col in row for side in sides for row in side[:1]):
            return col
    return None


def _group(rows: list[dict[str, Any]], column: str | None) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        issue = "all" if column is None else str(row.get(column))
        out.setdefault(issue, []).append(row)
    return out


def evaluate(gold: Any, pred: Any, *, n_boot: int = 1000, seed: int = 0,
             aliases: Mapping[str, str] | None = None, weeks: Collection[str] | None = None,
             issue_column: str | None = None,
             missing_pred_as_empty: bool = False) -> dict[str, Any]:
    """Per-issue and averaged metrics of ``pred`` against ``gold`` (lists of dicts or polars
    frames of tuples). Issues come from ``issue_column`` (default: the first of
    :data:`ISSUE_COLUMNS` present; none → one issue ``all``). ``aliases`` maps printed titles to
    IMDb ids for both sides. Returns ``per_issue`` rows, ``summary`` (per metric: mean, ci_low,
    ci_high, n_issues, n_excluded, excluded [{issue, reason}]), ``missing`` and counts."""
    gold_rows, pred_rows = _rows(gold), _rows(pred)
    column = issue_column or _issue_column(gold_rows, pred_rows)
    return _evaluate_grouped(_group(gold_rows, column), _group(pred_rows, column),
                             n_boot=n_boot, seed=seed, aliases=aliases, weeks=weeks,
                             missing_pred_as_empty=missing_pred_as_empty)


# ---------------------------------------------------------------------------------------------
# files


def read_tuples_file(path: Path) -> list[dict[str, Any]]:
    """One issue's tuples: ``.jsonl`` (one JSON object per line, blank lines skipped) or ``.tsv``
    (tab-separated, header with at least theater, city, movie, week, gross; no quoting: values
    are read verbatim; an empty gross is null)."""
    path = Path(path)
    rows: list[dict[str, Any]] = []
    if path.suffix == ".jsonl":
        with path.open(encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise ValueError(f"{path}:{n}: not JSON ({exc.msg})") from None
                if not isinstance(row, dict):
                    raise ValueError(f"{path}:{n}: not a JSON object")
                rows.append(row)
    elif path.suffix == ".tsv":
        with path.open(encoding="utf-8", newline="") as fh:
            reader = csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)
            absent = [c for c in TUPLE_FIELDS if c not in (reader.fieldnames or [])]
            if absent:
                raise ValueError(f"{path}: header lacks {', '.join(absent)}")
            for row in reader:
                rows.append({k: (v if v != "" else None) for k, v in row.items() if k is not None})
    else:
        raise ValueError(f"{path}: not a .jsonl or .tsv file")
    for n, row in enumerate(rows, 1):
        try:
            parse_gross(row.get("gross"))
        except ValueError as exc:
            raise ValueError(f"{path}: tuple {n}: {exc}") from None
    return rows


def read_issue_dir(folder: Path) -> dict[str, list[dict[str, Any]]]:
    """Issue (file stem) → tuples, for every ``*.jsonl`` / ``*.tsv`` file in ``folder`` (other
    files are ignored; one stem with both suffixes is an error)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"not a directory: {folder}")
    out: dict[str, list[dict[str, Any]]] = {}
    for path in sorted(folder.iterdir()):
        if not path.is_file() or path.suffix not in FILE_SUFFIXES:
            continue
        if path.stem in out:
            raise ValueError(f"{folder}: issue {path.stem} has both a .jsonl and a .tsv file")
        out[path.stem] = read_tuples_file(path)
    return out


def evaluate_dirs(gold_dir: Path, pred_dir: Path, **kw: Any) -> dict[str, Any]:
    """:func:`evaluate` over two folders of one file per issue, matched by file stem (keyword
    arguments as for :func:`evaluate`, except ``issue_column``)."""
    result = _evaluate_grouped(read_issue_dir(gold_dir), read_issue_dir(pred_dir),
                               n_boot=kw.pop("n_boot", 1000), seed=kw.pop("seed", 0),
                               aliases=kw.pop("aliases", None), weeks=kw.pop("weeks", None),
                               missing_pred_as_empty=kw.pop("missing_pred_as_empty", False))
    if kw:
        raise TypeError(f"unexpected keyword argument(s): {', '.join(sorted(kw))}")
    result["gold_dir"] = str(gold_dir)
    result["pred_dir"] = str(pred_dir)
    return result


# ---------------------------------------------------------------------------------------------
# rendering


def _fmt(value: float | None, reason: str | None = None) -> str:
    if value is None:
        return f"n/a ({reason})" if reason else "n/a"
    return f"{value:.3f}"


def render_eval_table(result: Mapping[str, Any]) -> str:
    """A plain-text table: one line per issue, then the averages with their 95% intervals, the
    issues left out of each average and the missing issues."""
    header = ("issue", "gold", "pred", "shared", "spearman", "movie F1", "tuple F1")
    lines = [header]
    for row in result["per_issue"]:
        lines.append((str(row["issue"]), str(row["n_gold_tuples"]), str(row["n_pred_tuples"]),
                      str(row["n_rho_movies"]),
                      _fmt(row["spearman"], row["spearman_reason"]),
                      _fmt(row["movie_f1"], row["movie_f1_reason"]),
                      _fmt(row["tuple_f1"], row["tuple_f1_reason"])))
    widths = [max(len(r[i]) for r in lines) for i in range(len(header))]

    def fmt_line(cells: Sequence[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    out = [fmt_line(lines[0]), "  ".join("-" * w for w in widths)]
    out += [fmt_line(r) for r in lines[1:]]
    pct = round(100 * result.get("confidence", CONFIDENCE))
    out.append("")
    out.append(f"mean over issues [{pct}% bootstrap CI, n_boot={result['n_boot']}, "
               f"seed={result['seed']}]:")
    for metric, label in (("spearman", "spearman"), ("movie_f1", "movie F1"),
                          ("tuple_f1", "tuple F1")):
        s = result["summary"][metric]
        if s["mean"] is None:
            text = "n/a (no issue defines it)"
        else:
            text = f"{s['mean']:.3f} [{s['ci_low']:.3f}-{s['ci_high']:.3f}]"
        text += f"  ({s['n_issues']} issues"
        if s["n_excluded"]:
            reasons = Counter(e["reason"] for e in s["excluded"])
            text += ", excluded: " + ", ".join(f"{n} {r}" for r, n in sorted(reasons.items()))
        out.append(f"  {label:<9} {text})")
    out.append(f"issues scored: {result['n_issues_scored']}  gold tuples: "
               f"{result['n_gold_tuples']}  predicted tuples: {result['n_pred_tuples']}")
    if result["missing"]:
        out.append("missing issues (not scored): " + ", ".join(
            f"{m['issue']} ({m['reason']})" for m in result["missing"]))
    return "\n".join(out) + "\n"
