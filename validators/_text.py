"""Text normalisation shared by the validators (polars expressions, vectorised).

Subtitle payloads carry presentation markup that is not dialogue: HTML-style tags (``<i>``,
``<font color=...>``), ASS override blocks (``{\\an8}``, ``{\\3c&H00C5D2&\\fs28}``), bidi and
zero-width controls (RLE U+202B, RLM U+200F, ZWNJ U+200C, BOM) and, in Arabic-script credits,
the decorative tatweel U+0640 (``تـرجـمـة``). The helpers below remove them before matching,
language identification and token counting. They never change the stored entries.
"""

from __future__ import annotations

import polars as pl

#: HTML-style tags used in SRT payloads (a closed list, so "a < b > c" in dialogue survives).
TAG_RE = r"(?i)<(?:/\s*)?(?:i|b|u|s|em|strong|font|span|br|c|v|ruby|rt|rb|p|div)(?:\s[^<>\n]*)?\s*/?>"
#: ASS/SSA override blocks inside SRT text.
ASS_RE = r"\{\\[^{}\n]*\}"
#: Zero-width and bidi controls, BOM, Arabic tatweel.
CONTROL_RE = "[\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff\u0640]"
#: Any letter (Unicode).
LETTER_RE = r"\p{L}"
#: The characters :func:`strip_markup` can remove or change (CR, ``<``, ``{``, the controls): a
#: text without any is its own :func:`strip_markup`.
MARKUP_RE = "[\\r<{]|" + CONTROL_RE
#: Runs of whitespace that are not already one space (two or more whitespace characters, or one
#: that is not a space): replacing these by a space is replacing every ``\s+`` by a space, with
#: far fewer replacements.
WHITESPACE_RUN_RE = r"\s{2,}|[^\S ]"


def strip_markup(expr: pl.Expr) -> pl.Expr:
    """Tags, ASS blocks and control characters removed; line breaks normalised to ``\\n``."""
    return (
        expr.str.replace_all(r"\r\n?", "\n")
        .str.replace_all(TAG_RE, "")
        .str.replace_all(ASS_RE, "")
        .str.replace_all(CONTROL_RE, "")
    )


def normalized_text(expr: pl.Expr) -> pl.Expr:
    """:func:`strip_markup` plus Unicode NFC (cp1258 Vietnamese decodes to decomposed marks)."""
    return strip_markup(expr).str.normalize("NFC")


def strip_markup_series(text: pl.Series) -> pl.Series:
    """:func:`strip_markup` of every value of ``text``, computed only for the values holding a
    character of :data:`MARKUP_RE` (the others are their own result)."""
    rows = text.str.contains(MARKUP_RE).arg_true()
    if len(rows) == 0:
        return text
    stripped = text.gather(rows).to_frame("t").select(strip_markup(pl.col("t"))).to_series()
    return text.clone().scatter(rows, stripped)
