"""Planted OCR errors of the sample Variety world (cinesub/sample/variety.py): the kinds seen in
realdata/variety_ocr — misread heading words and damaged money amounts — placed deterministically."""

from __future__ import annotations

import random
import re

#: (page kind, occurrence index among pages of that kind in the item, clean, noisy)
OCR_NOISE_PLAN: tuple[tuple[str, int, str, str], ...] = (
    ("grosses", 0, "Estimates for This Week", "listimates for This Week"),
    ("grosses", 1, "Estimates for This Week", "Estimates for Thls^eck"),
    ("grosses", 0, "PICTURE GROSSES", "PICTDRE GROSSES"),
    ("broadway", 0, "Estimates for This Week", "Estimate fer This Week"),
    ("grosses", 0, "Estimates for Last Week", "Estimates for Lasl Week"),
)


def ocr_noise(text: str, kind: str, occurrence: int, rng: random.Random) -> tuple[str, list[dict[str, str]]]:
    """Planted OCR errors of the kinds seen in realdata/variety_ocr; returns the noisy text and the
    list of substitutions made."""
    made: list[dict[str, str]] = []
    for k, occ, clean, noisy in OCR_NOISE_PLAN:
        if k == kind and occ == occurrence and clean in text:
            text = text.replace(clean, noisy, 1)
            made.append({"clean": clean, "noisy": noisy})
    if kind in ("grosses", "broadway"):
        # money noise only below the headline (lines 3+), where the entries are
        head_end = text.find("\n", text.find("\n") + 1) + 1
        head, text = text[:head_end], text[head_end:]
        text, extra = money_noise(text, rng)
        made.extend(extra)
        text = head + text
    return text, made


def money_noise(text: str, rng: random.Random) -> tuple[str, list[dict[str, str]]]:
    """A '0' read as 'Q' ($9,000 → $9,QQ0 style), a '$' read as 'S', a gross broken across
    lines ($17,- 000), on three different amounts of the text."""
    made: list[dict[str, str]] = []
    amounts = re.findall(r"\$\d{1,3},\d{3}", text)
    if not amounts:
        return text, made
    a = amounts[rng.randrange(len(amounts))]
    if "0" in a:
        q = a[:-3] + a[-3:-1].replace("0", "Q") + a[-1]
        if q != a:
            text = text.replace(a, q, 1)
            made.append({"clean": a, "noisy": q})
    b = amounts[(amounts.index(a) + 3) % len(amounts)]
    if b != a and b in text:
        text = text.replace(b, "S" + b[1:], 1)
        made.append({"clean": b, "noisy": "S" + b[1:]})
    c = amounts[(amounts.index(a) + 5) % len(amounts)]
    if c not in (a, b) and c in text:
        broken = c.replace(",", ",- ", 1)
        text = text.replace(c, broken, 1)
        made.append({"clean": c, "noisy": broken})
    return text, made
