"""Exact complete-coverage optimisation (SPEC A7; docs/coverage.md).

For a set S of attributes (subtitle languages, later rating countries), M(S) is the set of films
that have *every* attribute in S and the score is q(S) = |S|·|M(S)| (files retained). ``solve``
returns, for every size K, the proven optimum over all K-subsets of the pool, beside the
frequency-prefix baseline (the K most frequent attributes).

Method: films are bits of a Python int per attribute, so M(S) is an AND of ints and |M(S)| an
``int.bit_count()``. A depth-first search enumerates subsets containing the required attributes;
at every node the remaining candidates are ordered by how many films they keep with the current
intersection C (their *values*, descending — at the root this is the marginal frequency) and the
child built on the t-th candidate may only add candidates after it. Any K-subset reached below
that child keeps at most ``v[t + K - s - 1]`` films (s = current size; the intersection is bounded
by each of its members' values and the K-s values used are at best the largest ones from t on),
so its score is at most ``K · v[t + K - s - 1]``. A child is explored only while that bound
reaches the best score known for some K (bounds fall as t grows, so the loop stops at the first
child that cannot reach any K). Candidates keeping fewer than ``min_films`` films (at least 1)
with C are dropped outright. Nothing else is cut, so the result is exact.

Tie-breaking (deterministic): higher score, then more films, then the lexicographically smallest
sorted attribute list. Ties are honoured exactly: a branch whose bound only *equals* the best
score is still explored when its lexicographically smallest possible set beats the incumbent.

Closed sets (``solve``; the plain subset search above is kept as ``solve_subset_search``, the
benchmark's baseline). The closure of a set S is every attribute all films of M(S) have; it keeps
the same films. The best K-set can always be read off a *closed* set C with |C| >= K: any K-subset
of C keeps at least |M(C)| films, so for each K the optimum is the best closed set of at least K
attributes and, among the closed sets that tie it, the K smallest names (required ones kept) of
one of them — the lexicographically smallest optimal K-list (a K-set's own closure holds it, and
the K smallest names of a superset sort no later). The search therefore visits closed sets only:
a child's intersection absorbs every candidate all its films have, and a child whose closure holds
an attribute an earlier branch took (an earlier sibling, or one excluded higher up) is skipped as
already reached there. Bounds and the tie rule are those above, with the lexicographic hope of a
child drawn from its node's attributes and the candidates from t on (a closed set below it need
not keep the node's own attributes in its K-list). A closed set scores for the sizes between its
parent's size (exclusive: the parent keeps strictly more films) and its own.

The method ``solve`` runs (``stats.method``): pools of at most ``MAX_ATTRS`` (62) attributes use
the compiled branch and bound of :mod:`validators.coverage_batch`, one run per size K
(``per_k_compiled``: films as attribute masks, peeling to the films holding enough candidates,
a miss-side bound, the same tie rule; nodes with at most 4,096 films finish on film bitsets with
pairwise-compatibility bounds); wider pools use the closed-set search above (``closed``).
All three give the same answers (tests and the benchmark compare them).

Sets keeping no film score 0. When every K-subset keeps no film and ``min_films`` is 0, the answer
for that K is the lexicographically smallest feasible K-subset (all tie at score 0); when
``min_films`` > 0 cannot be met, or K is smaller than the number of required attributes or larger
than the pool, ``search`` is ``None`` for that K.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from validators.coverage_batch import MAX_ATTRS, best_k_set, film_masks

Avail = Mapping[str, Iterable[str]] | Iterable[tuple[str, str]]


class CoverageError(ValueError):
    """Bad input or parameters (unknown required attribute, k < 1, ...)."""


# --------------------------------------------------------------------------------------------
# input
# --------------------------------------------------------------------------------------------
def load_bitsets(avail: Avail) -> tuple[dict[str, int], int]:
    """(attribute -> film bitset, number of films) from ``{film_id: attributes}`` or
    ``[(film_id, attribute), ...]``. Films are numbered by attribute count (descending), then id; a film listed with no
    (or an empty) attribute still counts as a film. Duplicate pairs are harmless."""
    per_film: dict[str, set[str]] = {}
    if isinstance(avail, Mapping):
        for film, attrs in avail.items():
            per_film.setdefault(str(film), set()).update(str(a) for a in attrs if a is not None and str(a) != "")
    else:
        for film, attr in avail:
            s = per_film.setdefault(str(film), set())
            if attr is not None and str(attr) != "":
                s.add(str(attr))
    bits: dict[str, int] = {}
    # films with the most attributes get the lowest bits: deep in the search the intersection
    # holds mostly such films, so its int stays short and every AND / popcount is cheap
    order = sorted(per_film, key=lambda f: (-len(per_film[f]), f))
    for i, film in enumerate(order):
        for a in per_film[film]:
            bits[a] = bits.get(a, 0) | (1 << i)
    return bits, len(per_film)


def rank_attributes(bits: Mapping[str, int]) -> list[str]:
    """Attributes by availability: number of films descending, then name."""
    return sorted(bits, key=lambda a: (-bits[a].bit_count(), a))


def _entry(attrs: Iterable[str], films: int) -> dict[str, Any]:
    attrs = sorted(attrs)
    return {"attributes": attrs, "films": films, "score": len(attrs) * films}


def _intersection(bits: Mapping[str, int], attrs: Iterable[str], universe: int) -> int:
    c = universe
    for a in attrs:
        c &= bits[a]
    return c


# --------------------------------------------------------------------------------------------
# the exact search
# --------------------------------------------------------------------------------------------
def _reachable_children(search: Any, c: int, s: int, vals: list) -> Iterator[tuple[int, bool, list[int]]]:
    """The children of a search node worth visiting, shared by both searches: sorts ``vals``
    (``(-value, name, c ∩ b, ...)`` of every candidate at or above the floor) and yields
    ``(t, strict, tied)`` for each candidate ``vals[t]`` whose value and degree bounds still reach
    an incumbent — ``strict`` when one beats it, else ``tied`` = the sizes it only equals (the
    caller's lexicographic rule decides those)."""
    floor = search.floor
    score = search.score
    vals.sort()  # value descending, then name (names are unique)
    m = len(vals)
    # sizes this node can still improve (the value bound at t = 0; bounds only fall with t)
    ks = [k for k in range(s + 1, min(search.max_k, s + m) + 1)
          if k in search.ks and -k * vals[k - s - 1][0] >= score[k]]
    if not ks:
        return
    # degree masks: planes[j][r] = films of c having at least r of the candidates vals[j:]
    # (bit-sliced "at least r" counters built from the end). A K-set below the child on t
    # holds candidate t and K - s - 1 candidates after it, so it keeps at most
    # |c ∩ b_t ∩ planes[t + 1][K - s - 1]| films — and at most the (K - s)-th value from t.
    big_r = ks[-1] - s
    ge = [c] + [0] * big_r
    planes: list = [None] * (m + 1)
    planes[m] = ge[:]
    search.intersections += (m - 1) * big_r
    for j in range(m - 1, 0, -1):
        cb = vals[j][2]
        for r in range(min(big_r, m - j), 0, -1):
            ge[r] |= ge[r - 1] & cb
        planes[j] = ge[:]
    tied: list[int] = []  # sizes whose bound below child t only equals the incumbent
    for t in range(m):
        cb_t = vals[t][2]
        nxt = planes[t + 1]
        alive = reach = strict = False
        tied.clear()
        for k in ks:
            idx = t + k - s - 1
            if idx >= m:
                break
            w = -vals[idx][0]
            sk = score[k]
            if w < floor or k * w < sk:
                continue
            alive = True  # the value bound still reaches: it only falls as t grows
            d = (cb_t & nxt[k - s - 1]).bit_count()  # the degree bound (not monotone in t)
            if d < w:
                w = d
            if w < floor:
                continue
            bound = k * w
            if bound > sk:
                strict = reach = True
                break
            if bound == sk:
                reach = True
                tied.append(k)
        if not alive:
            break  # no later child can reach any size either
        if not reach:
            continue
        yield t, strict, tied


class _SubsetSearch:
    """The previous algorithm (kept as the benchmark's named baseline, :func:`solve_subset_search`):
    depth-first branch and bound over every subset. ``score[K]``/``attrs[K]``: incumbents."""

    def __init__(self, ks: set[int], max_k: int, min_films: int):
        self.ks = ks
        self.max_k = max_k
        self.floor = max(min_films, 1)
        self.score = {k: -1 for k in ks}  # -1: nothing found yet
        self.attrs: dict[int, list[str] | None] = {k: None for k in ks}
        self.nodes = 0  # subsets whose intersection was formed (search nodes)
        self.intersections = 0  # AND + popcount operations (candidate values and degree masks)

    def stats(self) -> dict[str, Any]:
        return {"method": "subset", "nodes": self.nodes, "intersections": self.intersections}

    def record(self, s: int, films: int, path: list[str]) -> None:
        if s not in self.ks or films < self.floor:
            return
        score = s * films
        if score > self.score[s]:
            self.score[s], self.attrs[s] = score, sorted(path)
        elif score == self.score[s]:
            names = sorted(path)
            if names < self.attrs[s]:  # type: ignore[operator]
                self.attrs[s] = names

    def run(self, c: int, s: int, path: list[str], cand: list[tuple[int, str]]) -> None:
        """Visit the node with intersection ``c`` of the ``s`` attributes of ``path``;
        ``cand``: (film bitset, name) of the attributes it may still add."""
        self.nodes += 1
        films = c.bit_count()
        self.record(s, films, path)
        floor = self.floor
        if s >= self.max_k or not cand or films < floor:
            return
        self.intersections += len(cand)
        # candidate values: films each keeps with c; candidates below the floor can never be used
        vals = []
        for b, name in cand:
            cb = c & b
            v = cb.bit_count()
            if v >= floor:
                vals.append((-v, name, cb, b))
        for t, strict, tied in _reachable_children(self, c, s, vals):
            name = vals[t][1]
            if not strict and not self._lex_hope(t, s, path, name, vals, tied):
                continue
            self.run(vals[t][2], s + 1, path + [name], [(x[3], x[1]) for x in vals[t + 1:]])

    def _lex_hope(self, t: int, s: int, path: list[str], name: str, vals: list, tied: list[int]) -> bool:
        """Whether the child on candidate t can still win a tie for some size in ``tied`` (whose
        bound equals the incumbent): its smallest possible sorted list beats the incumbent's."""
        rest = sorted(x[1] for x in vals[t + 1:])
        for k in tied:
            lexmin = sorted(path + [name] + rest[: k - s - 1])
            if self.attrs[k] is None or lexmin < self.attrs[k]:
                return True
        return False


class _ClosedSearch:
    """Depth-first branch and bound over *closed* sets (module docstring, "Closed sets").
    ``score[K]``/``attrs[K]``: incumbents (score K·films, sorted attribute list)."""

    def __init__(self, ks: set[int], max_k: int, min_films: int, require: Iterable[str],
):
        self.ks = ks
        self.max_k = max_k
        self.floor = max(min_films, 1)
        self.req = sorted(require)
        self.score = {k: -1 for k in ks}  # -1: nothing found yet
        self.attrs: dict[int, list[str] | None] = {k: None for k in ks}
        self.nodes = 0  # closed sets visited (duplicates included)
        self.duplicates = 0  # nodes whose closure met an excluded attribute (reached elsewhere)
        self.intersections = 0  # AND (+ popcount) operations on film bitsets

    def stats(self) -> dict[str, Any]:
        return {"method": "closed", "nodes": self.nodes, "intersections": self.intersections,
                "duplicates": self.duplicates}

    def record(self, k: int, films: int, names: list[str]) -> None:
        """Offer the sorted K-list ``names`` keeping ``films`` films (>= floor) for size k."""
        score = k * films
        if score > self.score[k]:
            self.score[k], self.attrs[k] = score, names
        elif score == self.score[k] and names < self.attrs[k]:  # type: ignore[operator]
            self.attrs[k] = names

    def record_closed(self, lo: int, s: int, free: list[str], films: int) -> None:
        """The closed set ``require + free`` (``s`` attributes, ``free`` sorted) keeping ``films``
        films, for the sizes ``lo < K <= s``: its best K-subset containing the required
        attributes is the required ones plus the smallest ``K - |require|`` other names (every
        K-subset keeps at least its films, and sizes ``<= lo`` have a strictly better ancestor)."""
        nreq = len(self.req)
        for k in range(lo + 1, min(self.max_k, s) + 1):
            if k in self.ks:
                self.record(k, films, sorted(self.req + free[: k - nreq]))

    def run(self, c: int, s: int, free: list[str], lo: int, cand: list[tuple[int, int, str]],
            excl: list[int]) -> None:
        """Visit ``closure(P)`` for the set P (``s`` attributes: the required ones + ``free``) with
        intersection ``c`` (at least ``floor`` films); ``lo``: the parent's size; ``cand``:
        (films bitset, its complement, name) of the attributes it may still add;
        ``excl``: complements of the attributes its closed sets must not hold (earlier branches)."""
        self.nodes += 1
        films = c.bit_count()
        self.intersections += len(excl)
        for nb in excl:
            if not c & nb:  # an excluded attribute is in the closure: found in an earlier branch
                self.duplicates += 1
                return
        floor = self.floor
        self.intersections += len(cand)
        vals = []
        added = False
        for b, nb, name in cand:
            cb = c & b
            v = cb.bit_count()
            if v == films:  # every film of c has it: it belongs to the closure
                free = free + [name]
                s += 1
                added = True
            elif v >= floor:  # below the floor it can never be used (nor be in a closure)
                vals.append((-v, name, cb, b, nb))
        if added:
            free.sort()
        self.record_closed(lo, s, free, films)
        if s >= self.max_k or not vals:
            return
        for t, strict, tied in _reachable_children(self, c, s, vals):
            if not strict and not self._lex_hope(t, free, vals, tied):
                continue
            # the child's closed sets hold vals[t] and none of vals[:t] (nor this node's exclusions)
            self.run(vals[t][2], s + 1, sorted(free + [vals[t][1]]), s,
                     [(x[3], x[4], x[1]) for x in vals[t + 1:]],
                     [x[4] for x in vals[t - 1::-1]] + excl if t else excl)

    def _lex_hope(self, t: int, free: list[str], vals: list, tied: list[int]) -> bool:
        """Whether a closed set below the child on candidate t can still win a tie for some size
        in ``tied``: its K-list is drawn from this node's attributes, ``vals[t]`` and the later
        candidates, so it is at best the smallest K of them (required ones kept)."""
        names = sorted(free + [x[1] for x in vals[t:]])
        nreq = len(self.req)
        for k in tied:
            lexmin = sorted(self.req + names[: k - nreq])
            if self.attrs[k] is None or lexmin < self.attrs[k]:
                return True
        return False


class _PerKSearch:
    """The compiled branch and bound of :mod:`validators.coverage_batch`, one run per size K
    (pools of at most ``MAX_ATTRS`` attributes). ``attrs[K]``: the best sorted K-list or None."""

    def __init__(self, ks: set[int], min_films: int):
        self.ks = ks
        self.floor = max(min_films, 1)
        self.attrs: dict[int, list[str] | None] = {k: None for k in ks}
        self.nodes = 0

    def stats(self) -> dict[str, Any]:
        return {"method": "per_k_compiled", "nodes": self.nodes}

    def run(self, bits: Mapping[str, int], pool_attrs: list[str], n_films: int, require: list[str]) -> None:
        names = sorted(pool_attrs)
        n = len(names)
        masks, counts = film_masks(bits, names, n_films)
        req = sum(1 << (n - 1 - names.index(a)) for a in require)
        for k in sorted(self.ks):
            found, nodes = best_k_set(masks, counts, n, k, req, self.floor)
            self.nodes += nodes
            if found is not None:
                self.attrs[k] = [a for i, a in enumerate(names) if found[1] >> (n - 1 - i) & 1]


def solve(
    avail: Avail,
    pool: int | None = None,
    max_k: int | None = None,
    k: int | None = None,
    require: Iterable[str] = (),
    min_films: int = 0,
) -> dict[str, Any]:
    """Exact complete-coverage optimum for every K (SPEC A7).

    ``avail``: ``{film_id: attributes}`` or ``[(film_id, attribute), ...]``.
    ``pool``: keep the top-N attributes by availability (films, then name); required attributes
    outside the top-N are added to it. ``None``: every attribute.
    ``max_k``: sizes 1..max_k (default and cap: the pool size); ``k``: only that size.
    ``require``: attributes every set must contain; ``min_films``: sets must keep at least this
    many films.

    Returns ``{"best", "per_k": [{"k", "search", "prefix"}], "elapsed_s", "pool", "films",
    "stats"}``; ``search``/``prefix``/``best`` are ``{"attributes", "films", "score"}`` or None;
    ``stats``: ``{"method", "nodes", ...}`` (module docstring, "The method ``solve`` runs").
    """
    return _solve(avail, pool, max_k, k, require, min_films, closed=True)


def solve_subset_search(avail: Avail, *args: Any, **kwargs: Any) -> dict[str, Any]:
    """:func:`solve` by the previous algorithm: the branch and bound over every subset
    (``_SubsetSearch``), kept as the benchmark's named baseline. Same arguments, same answers."""
    bound = inspect.signature(solve).bind(avail, *args, **kwargs)
    bound.apply_defaults()
    return _solve(*bound.arguments.values(), closed=False)


def _solve(avail: Avail, pool: int | None, max_k: int | None, k: int | None, require: Iterable[str],
           min_films: int, closed: bool) -> dict[str, Any]:
    t0 = time.perf_counter()
    bits, n_films = load_bitsets(avail)
    require = list(dict.fromkeys(str(r).strip() for r in require if str(r).strip()))
    unknown = [r for r in require if r not in bits]
    if unknown:
        raise CoverageError(f"unknown required attribute(s): {', '.join(unknown)}")
    if pool is not None and pool < 1:
        raise CoverageError("pool must be >= 1")
    if k is not None and k < 1:
        raise CoverageError("k must be >= 1")
    if max_k is not None and max_k < 1:
        raise CoverageError("max_k must be >= 1")
    if min_films < 0:
        raise CoverageError("min_films must be >= 0")

    ranked = rank_attributes(bits)
    chosen = ranked if pool is None else ranked[:pool]
    chosen = chosen + [a for a in ranked if a in require and a not in chosen]
    pool_attrs = [a for a in ranked if a in set(chosen)]  # frequency order
    n = len(pool_attrs)
    universe = (1 << n_films) - 1

    if k is not None:
        ks_list = [k]
    else:
        ks_list = list(range(1, min(max_k or n, n) + 1))
    ks = {x for x in ks_list if len(require) <= x <= n}

    search: _ClosedSearch | _SubsetSearch | _PerKSearch
    if closed and n <= MAX_ATTRS:
        search = _PerKSearch(ks, min_films)
        search.run(bits, pool_attrs, n_films, require)
    elif closed:
        search = _ClosedSearch(ks, max(ks) if ks else 0, min_films, require)
        c0 = _intersection(bits, require, universe)
        if ks and c0.bit_count() >= search.floor:
            cand = [(bits[a], universe & ~bits[a], a) for a in pool_attrs if a not in require]
            search.run(c0, len(require), [], len(require) - 1, cand, [])
    else:
        search = _SubsetSearch(ks, max(ks) if ks else 0, min_films)
        if ks:
            c0 = _intersection(bits, require, universe)
            cand2 = [(bits[a], a) for a in pool_attrs if a not in require]
            search.run(c0, len(require), list(require), cand2)

    others = [a for a in pool_attrs if a not in require]
    per_k = []
    for kk in ks_list:
        if kk not in ks:
            per_k.append({"k": kk, "search": None, "prefix": None})
            continue
        prefix_attrs = list(require) + others[: kk - len(require)]
        prefix = _entry(prefix_attrs, _intersection(bits, prefix_attrs, universe).bit_count())
        if search.attrs[kk] is not None:
            found = search.attrs[kk]
            res = _entry(found, _intersection(bits, found, universe).bit_count())
        elif min_films == 0:
            # every feasible K-subset keeps no film: all tie at 0, take the lexicographically smallest
            lex = sorted(require) + sorted(others)[: kk - len(require)]
            res = _entry(lex, _intersection(bits, lex, universe).bit_count())
        else:
            res = None
        per_k.append({"k": kk, "search": res, "prefix": prefix})

    found_entries = [p["search"] for p in per_k if p["search"] is not None]
    best = min(found_entries, key=lambda e: (-e["score"], -e["films"], e["attributes"]), default=None)
    return {
        "best": best,
        "per_k": per_k,
        "elapsed_s": round(time.perf_counter() - t0, 6),
        "films": n_films,
        "pool": [{"attribute": a, "films": bits[a].bit_count()} for a in pool_attrs],
        "require": sorted(require),
        "min_films": min_films,
        "stats": search.stats(),
    }


# --------------------------------------------------------------------------------------------
# references (tests, benchmark)
# --------------------------------------------------------------------------------------------
def brute_force(avail: Avail, pool: int | None = None, ks: Iterable[int] = (), require: Iterable[str] = (),
                min_films: int = 0) -> dict[int, dict[str, Any] | None]:
    """Plain enumeration with ``itertools.combinations`` (no pruning), same tie-breaking:
    ``{K: {"attributes", "films", "score"} | None}``."""
    from itertools import combinations

    bits, n_films = load_bitsets(avail)
    require = set(require)
    ranked = rank_attributes(bits)
    chosen = set(ranked if pool is None else ranked[:pool]) | require
    pool_attrs = sorted(chosen)
    universe = (1 << n_films) - 1
    out: dict[int, dict[str, Any] | None] = {}
    for kk in ks:
        best = None
        for combo in combinations(pool_attrs, kk):
            if not require <= set(combo):
                continue
            films = _intersection(bits, combo, universe).bit_count()
            if films < min_films:
                continue
            e = _entry(combo, films)
            if best is None or (-e["score"], -e["films"], e["attributes"]) < (-best["score"], -best["films"], best["attributes"]):
                best = e
        out[kk] = best
    return out


def plain_enumeration(bits_list: list[int], n_films: int, max_k: int) -> tuple[list[int], int]:
    """Best score per K for K <= max_k by visiting every subset (depth-first, one AND and one
    popcount per subset, no pruning). Returns (best score per K indexed by K, subsets visited)."""
    best = [0] * (max_k + 1)
    count = 0
    n = len(bits_list)

    def rec(start: int, c: int, s: int) -> None:
        nonlocal count
        for j in range(start, n):
            cj = c & bits_list[j]
            count += 1
            sc = (s + 1) * cj.bit_count()
            if sc > best[s + 1]:
                best[s + 1] = sc
            if s + 1 < max_k:
                rec(j + 1, cj, s + 1)

    rec(0, (1 << n_films) - 1, 0)
    return best, count
