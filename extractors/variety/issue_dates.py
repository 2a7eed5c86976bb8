"""The issue date of a Variety page: printed in its running head ("Wednesday, March 7, 1934"),
read tolerantly of OCR-damaged month names; pure functions used by ``variety-discover``'s item jobs."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_HEAD_DATE_RE = re.compile(r"([A-Za-z][A-Za-z^]{2,9})\.?\s+(\d{1,2})\s*[,.]?\s*(1[89]\d\d)")
#: how far a running-head date may lie outside the item's own date range (days)
ISSUE_DATE_SLACK_DAYS = 10


def iso_date(value: Any) -> dt.date | None:
    """``value``'s first ten characters as a date (None when absent or not a date)."""
    try:
        return dt.date.fromisoformat(str(value)[:10]) if value else None
    except ValueError:
        return None


def head_issue_date(text: str, lo: dt.date | None = None, hi: dt.date | None = None,
                    head_chars: int = 250) -> dt.date | None:
    """The issue date printed in a page's running head ("Wednesday, March 7, 1934"), tolerant
    of OCR-damaged month names (rapidfuzz ≥ 80), and inside ``[lo, hi]`` ± a few days when given."""
    from rapidfuzz import fuzz, process

    for m in _HEAD_DATE_RE.finditer(text[:head_chars]):
        word = m.group(1).lower().replace("^", "")
        hit = process.extractOne(word, _MONTHS, scorer=fuzz.ratio, score_cutoff=80)
        if hit is None:
            continue
        try:
            d = dt.date(int(m.group(3)), _MONTHS.index(hit[0]) + 1, int(m.group(2)))
        except ValueError:
            continue
        slack = dt.timedelta(days=ISSUE_DATE_SLACK_DAYS)
        if (lo and d < lo - slack) or (hi and d > hi + slack):
            continue
        return d
    return None


def date_pages(texts: list[str], lo: dt.date | None, hi: dt.date | None) -> list[tuple[dt.date | None, str]]:
    """``(issue_date, source)`` of every page of an item in leaf order: the running head's date,
    else the previous page's, else the item's first date (``lo``)."""
    out: list[tuple[dt.date | None, str]] = []
    prev: dt.date | None = None
    for text in texts:
        found = head_issue_date(text, lo, hi)
        if found is not None:
            date, source = found, "running_head"
        elif prev is not None:
            date, source = prev, "previous_page"
        else:
            date, source = lo, "item_date"
        prev = date
        out.append((date, source))
    return out
