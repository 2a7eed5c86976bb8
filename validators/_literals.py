"""Necessary literals of a regex: the prefilter of vectorised sanitization.

:func:`required_literals` returns a set of strings such that **every** match of the regex contains
at least one of them (or ``None`` when no such set is found). Sanitization searches all entries of
a batch for the union of these literals in one Aho-Corasick pass (polars ``str.contains_any``) and
runs the real regexes only on the rows that contain one: a row without any literal cannot match,
so the decisions are exactly those of running every regex on every row.

How: the pattern (the Rust ``regex`` dialect polars uses) is parsed with Python's own regex parser
after two rewrites that keep its structure (``\\p{L}`` becomes ``\\w``, ``(?-u:\\b)`` becomes
``\\b``; both are non-literal atoms either way). Each node gets four finite sets (``None`` when
unknown or too large): ``exact`` (all strings it can match), ``prefix`` / ``suffix`` (every match
starts / ends with one of them) and ``required`` (every match contains one). Concatenation joins
a left suffix with a right prefix (so ``\\.(?:com|net)`` yields ``.com``, ``.net``); alternation
unites; a repeat with minimum 0 gives nothing. The most selective set wins (longest shortest
literal, then fewest). Under case-insensitive matching (``(?i)`` anywhere) the search is ASCII
case-insensitive and every non-ASCII case variant of a literal's letters (the Kelvin sign for
``k``, long s for ``s``, ``Ư`` for ``ư``) is added explicitly, a superset of the Unicode simple
case folding the Rust engine applies. Anything the parser does not understand gives ``None`` --
that pattern then runs on every row (slower, never wrong).
"""

from __future__ import annotations

import functools
import itertools
import re
from typing import Any

try:  # Python >= 3.11
    import re._constants as _c
    import re._parser as _p
except ImportError:  # pragma: no cover - older Pythons
    import sre_constants as _c  # type: ignore[no-redef]
    import sre_parse as _p  # type: ignore[no-redef]

__all__ = ["required_literals", "case_variants"]

#: the largest finite set carried through the analysis
CAP = 256
#: the largest character class treated as a set of literals
CLASS_CAP = 8

#: the code point ranges holding every character with a case mapping (a test checks it against a
#: scan of all code points of this Python's Unicode database)
CASED_RANGES: tuple[tuple[int, int], ...] = (
    (0x0000, 0x05FF), (0x10A0, 0x10FF), (0x13A0, 0x13FF), (0x1C80, 0x1FFF), (0x2100, 0x218F),
    (0x24B0, 0x24FF), (0x2C00, 0x2D2F), (0xA640, 0xA7FF), (0xAB50, 0xABBF), (0xFB00, 0xFB4F),
    (0xFF00, 0xFF6F), (0x10400, 0x105FF), (0x10C80, 0x10CFF), (0x118A0, 0x118FF),
    (0x16E40, 0x16E9F), (0x1E900, 0x1E95F),
)

_Info = tuple  # (exact, prefix, suffix, required): each frozenset[str] | None


def _rewrite(regex: str) -> str | None:
    """The pattern in Python's syntax with the same structure, or None when it uses Rust syntax
    Python would read differently (POSIX or nested classes, class set operations, other Unicode
    classes)."""
    out = regex.replace("(?-u:\\b)", "\\b").replace("\\p{L}", "\\w")
    in_class, i = False, 0
    while i < len(out):
        ch = out[i]
        if ch == "\\":
            if out[i + 1 : i + 2] in ("p", "P", "z") or out[i + 1 : i + 3] in ("x{", "u{", "U{"):
                return None
            i += 2
            continue
        if in_class:
            if ch == "[" or out[i : i + 2] in ("&&", "--", "~~"):
                return None
            if ch == "]":
                in_class = False
        elif ch == "[":
            in_class = True
            if out[i + 1 : i + 2] == "^":
                i += 1
            if out[i + 1 : i + 2] == "]":  # a leading ] is a literal
                i += 1
        i += 1
    return out


def _cross(a: frozenset | None, b: frozenset | None) -> frozenset | None:
    if a is None or b is None or len(a) * len(b) > CAP:
        return None
    return frozenset(x + y for x in a for y in b)


def _usable(s: frozenset | None) -> bool:
    return bool(s) and "" not in s


def _score(s: frozenset) -> tuple[int, int]:
    return (min(len(x) for x in s), -len(s))


def _best(*sets: frozenset | None) -> frozenset | None:
    good = [s for s in sets if _usable(s)]
    return max(good, key=_score) if good else None


def _exact(s: frozenset) -> _Info:
    return (s, s, s, s if _usable(s) else None)


_NONE: _Info = (None, None, None, None)


def _class_chars(items: list) -> frozenset | None:
    chars: set[str] = set()
    for op, av in items:
        if op is _c.LITERAL:
            chars.add(chr(av))
        elif op is _c.RANGE and av[1] - av[0] < CLASS_CAP:
            chars.update(chr(x) for x in range(av[0], av[1] + 1))
        else:  # NEGATE, CATEGORY, large ranges
            return None
        if len(chars) > CLASS_CAP:
            return None
    return frozenset(chars)


def _seq(items) -> _Info:
    info: _Info = _exact(frozenset({""}))
    for item in items:
        info = _concat(info, _node(item))
    return info


def _concat(left: _Info, right: _Info) -> _Info:
    le, lp, ls, lr = left
    re_, rp, rs, rr = right
    exact = _cross(le, re_)
    prefix = _cross(le, rp) if le is not None else lp
    if le is not None and prefix is None and _usable(le):
        prefix = le
    suffix = _cross(ls, re_) if re_ is not None else rs
    if re_ is not None and suffix is None and _usable(re_):
        suffix = re_
    required = _best(lr, rr, _cross(ls, rp), exact, prefix, suffix)
    if exact is not None:
        return (exact, exact, exact, required)
    return (None, prefix if _usable(prefix) else None, suffix if _usable(suffix) else None, required)


def _node(item) -> _Info:
    op, av = item
    if op is _c.LITERAL:
        return _exact(frozenset({chr(av)}))
    if op is _c.IN:
        chars = _class_chars(av)
        return _exact(chars) if chars else _NONE
    if op is _c.AT:
        return _exact(frozenset({""}))  # zero-width: transparent
    if op is _c.SUBPATTERN:
        return _seq(av[-1])
    if op is _c.BRANCH:
        alts = [_seq(a) for a in av[1]]
        out = []
        for k in range(4):
            sets = [a[k] for a in alts]
            if any(s is None for s in sets):
                out.append(None)
                continue
            u = frozenset().union(*sets)
            out.append(u if len(u) <= CAP else None)
        ex, pre, suf, _ = out
        req = [_best(a[3], a[1], a[2], a[0]) for a in alts]
        required = None if any(r is None for r in req) else frozenset().union(*req)
        if required is not None and len(required) > CAP:
            required = None
        if ex is not None:
            return (ex, ex, ex, _best(required, ex))
        return (None, pre if _usable(pre) else None, suf if _usable(suf) else None, required)
    if op in (_c.MAX_REPEAT, _c.MIN_REPEAT, getattr(_c, "POSSESSIVE_REPEAT", None)):
        lo, hi, sub = av
        child = _seq(sub)
        if lo == 0:
            if hi == 1 and child[0] is not None:
                return (child[0] | {""}, None, None, None)
            return _NONE
        exact = None
        if child[0] is not None and lo == hi:
            exact = child[0]
            for _ in range(lo - 1):
                exact = _cross(exact, child[0])
        if exact is not None:
            return _exact(exact)
        return (None, child[1], child[2], _best(child[3], child[1], child[2], child[0]))
    return _NONE  # ANY, NOT_LITERAL, CATEGORY, ASSERT, GROUPREF, ...


@functools.lru_cache(maxsize=None)
def _fold_orbits() -> dict[str, frozenset[str]]:
    """Every character with case variants -> all characters reachable by single-character
    lower/upper mappings (a superset of Unicode simple case folding classes)."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.get(x, x) != x:
            x = parent[x]
        return x

    def union(a: str, b: str) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[ra] = rb

    for cp in itertools.chain.from_iterable(range(a, b + 1) for a, b in CASED_RANGES):
        ch = chr(cp)
        for other in (ch.lower(), ch.upper(), ch.casefold(), ch.title()):
            if len(other) == 1 and other != ch:
                union(ch, other)
    groups: dict[str, set[str]] = {}
    for ch in list(parent):
        groups.setdefault(find(ch), set()).add(ch)
    out: dict[str, frozenset[str]] = {}
    for members in groups.values():
        members.add(find(next(iter(members))))
        fs = frozenset(members)
        for ch in fs:
            out[ch] = fs
    return out


def case_variants(literal: str) -> set[str] | None:
    """Every spelling of ``literal`` that case-insensitive matching treats as equal, up to ASCII
    case (the search is ASCII case-insensitive): ASCII letters keep one form plus their non-ASCII
    variants, other letters get all their variants. None when there are more than :data:`CAP`."""
    orbits = _fold_orbits()
    choices = []
    for ch in literal:
        orbit = orbits.get(ch)
        if orbit is None:
            choices.append((ch,))
        else:
            keep = {c for c in orbit if not c.isascii()}
            if ch.isascii() or any(c.isascii() for c in orbit):
                keep.add(next(c for c in sorted(orbit) if c.isascii()) if any(c.isascii() for c in orbit) else ch)
            choices.append(tuple(sorted(keep)))
    total = 1
    for c in choices:
        total *= len(c)
        if total > CAP:
            return None
    return {"".join(p) for p in itertools.product(*choices)}


def _ignorecase(parsed: Any) -> bool:
    if parsed.state.flags & _c.SRE_FLAG_IGNORECASE:
        return True
    stack = list(parsed)
    while stack:
        op, av = stack.pop()
        if op is _c.SUBPATTERN:
            if av[1] & _c.SRE_FLAG_IGNORECASE:
                return True
            stack.extend(av[-1])
        elif op is _c.BRANCH:
            for a in av[1]:
                stack.extend(a)
        elif op in (_c.MAX_REPEAT, _c.MIN_REPEAT, getattr(_c, "POSSESSIVE_REPEAT", None)):
            stack.extend(av[2])
    return False


@functools.lru_cache(maxsize=1024)
def required_literals(regex: str) -> frozenset[str] | None:
    """Strings one of which every match of ``regex`` contains, for an ASCII case-insensitive
    search (see the module docstring); ``None`` when the pattern yields no usable set."""
    rewritten = _rewrite(regex)
    if rewritten is None:
        return None
    try:
        parsed = _p.parse(rewritten)
    except (re.error, ValueError, TypeError, OverflowError):
        return None
    try:
        info = _seq(list(parsed))
    except (TypeError, ValueError, IndexError):  # a parser shape this module does not know
        return None
    best = _best(info[3], info[1], info[2], info[0])
    if best is None:
        return None
    if not _ignorecase(parsed):
        return best
    out: set[str] = set()
    for lit in best:
        v = case_variants(lit)
        if v is None:
            return None
        out |= v
    return frozenset(out) if len(out) <= 4 * CAP else None
