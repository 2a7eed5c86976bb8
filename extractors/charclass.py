"""Exact counts of character classes in a text, vectorised (numpy; pure functions).

The decoder's verification (:mod:`extractors.decode_verify`) and the script pre-checks of
:mod:`extractors.langid` count, per decoded text, how many characters fall in a dozen classes
(letters, Arabic letters, Latin letters beyond ASCII, Vietnamese letters, control characters, ...).
Each count is a sum of per-character terms, so it is the text's character histogram times a
0/1 weight per character: :class:`CharClasses` classifies each *distinct* character once per
process, with the very predicate that defines the class (a single-character regex such as
``[^\\W\\d_]`` is tested on that character, so the count equals ``len(regex.findall(text))``), and
counts a text with one ``np.unique`` over its code points. Two-character patterns whose first
and second classes are disjoint (a UTF-8 lead byte read as a legacy code page followed by a
continuation byte) are counted exactly on the per-position class bits (:meth:`CharClasses.pairs`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import numpy as np

__all__ = ["CharClasses", "codepoints", "regex_predicate", "control_count"]


def codepoints(text: str) -> np.ndarray:
    """The code points of ``text`` (uint32; lone surrogates kept as their code point)."""
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4")


def regex_predicate(pattern: re.Pattern[str]) -> Callable[[str], bool]:
    """``ch`` -> whether the single-character ``pattern`` matches ``ch`` (the findall count of a
    pattern that matches exactly one character is the number of characters it matches)."""
    return lambda ch: pattern.fullmatch(ch) is not None


def control_count(codes: np.ndarray) -> int:
    """How many code points are C0/C1 controls other than tab, LF and CR, DEL included (the
    class ``[\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f\\x7f-\\x9f]``)."""
    low = codes < 0x20
    return int(np.count_nonzero(low) - np.count_nonzero(codes == 9) - np.count_nonzero(codes == 10)
               - np.count_nonzero(codes == 13) + np.count_nonzero((codes >= 0x7F) & (codes <= 0x9F)))


class CharClasses:
    """Named character classes, each a predicate on one character; at most 64."""

    def __init__(self, classes: Sequence[tuple[str, Callable[[str], bool]]]):
        if len(classes) > 64:
            raise ValueError("at most 64 character classes")
        self.names = tuple(name for name, _ in classes)
        self._predicates = tuple(pred for _, pred in classes)
        self._bit = {name: np.uint64(1 << i) for i, name in enumerate(self.names)}
        self._cache: dict[int, int] = {}
        self._shifts = np.arange(len(self.names), dtype=np.uint64)

    def _bits(self, cp: int) -> int:
        bits = self._cache.get(cp)
        if bits is None:
            ch = chr(cp)
            bits = 0
            for i, pred in enumerate(self._predicates):
                if pred(ch):
                    bits |= 1 << i
            self._cache[cp] = bits
        return bits

    def _table(self, uniq: np.ndarray) -> np.ndarray:
        return np.fromiter((self._bits(c) for c in uniq.tolist()), dtype=np.uint64, count=len(uniq))

    def counts(self, codes: np.ndarray) -> dict[str, int]:
        """Characters of each class among ``codes`` (:func:`codepoints`)."""
        if len(codes) == 0:
            return dict.fromkeys(self.names, 0)
        uniq, mult = np.unique(codes, return_counts=True)
        member = (self._table(uniq)[:, None] >> self._shifts) & np.uint64(1)
        totals = mult @ member.astype(np.int64)
        return dict(zip(self.names, (int(x) for x in totals)))

    def per_position(self, codes: np.ndarray) -> np.ndarray:
        """The class bits of every position of ``codes``."""
        if len(codes) == 0:
            return np.zeros(0, dtype=np.uint64)
        uniq, inverse = np.unique(codes, return_inverse=True)
        return self._table(uniq)[inverse.reshape(-1)]

    def pairs(self, bits: np.ndarray, first: str, second: str) -> int:
        """Positions ``i`` with ``first`` at ``i`` and ``second`` at ``i + 1`` (:meth:`per_position`
        bits). Equal to the findall count of ``[first][second]`` when no character is in both
        classes (two matches can then never overlap)."""
        if len(bits) < 2:
            return 0
        a, b = self._bit[first], self._bit[second]
        return int(np.count_nonzero(((bits[:-1] & a) != 0) & ((bits[1:] & b) != 0)))
