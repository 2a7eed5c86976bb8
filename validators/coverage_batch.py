"""Compiled branch and bound for one size K of the complete-coverage search (SPEC A7; used by
:func:`validators.coverage_optimizer.solve`; numba, cached on disk after the first compile).

Films are rows: each film is a mask of the pool's attributes, bit ``n - 1 - i`` for the i-th
smallest name, so among sets of one size a *larger* mask is the lexicographically *smaller*
sorted list and the tie rule "more films, then the smallest names" is "larger (films, mask)".
A node is a set P of s attributes (the required ones included), the candidates R it may still
add (r = K - s of them) and the films holding P. At every node:

* **peel** — keep only the films holding at least r candidates (only they can hold a
  completion); ``V[t]``: the kept films holding candidate t (a completion using t keeps at most
  that many); drop the candidates below the node's threshold and repeat until nothing changes;
* **threshold** — the incumbent's film count when the node's lexicographically smallest
  completion (P plus the r smallest names of R) still beats the incumbent's list, else one more
  (equal films cannot win the tie); never below ``floor``;
* **miss-side bound** — a kept film missing z >= 1 candidates counts for a completion only if
  all z are among the m - r candidates left out; give each of them 1/z of the film: a completion
  keeps at most (films holding every candidate) + (the m - r largest shares);
* **children** — candidates sorted by ``V`` descending; the child on the i-th may add only the
  candidates after it and is pushed while the r-th value from i still reaches the threshold and
  the kept films holding the i-th candidate and at least r - 1 of those after it do too.
  At r = 1 the values *are* the film counts of the K-sets, which update the incumbent.

Depth first with an explicit stack (best child first); the films of a node are compacted into a
shared buffer above its parent's.

**Bitset search** (issue 18 point 3). A node whose kept films weigh at most ``BITSET_FILMS``
(4,096; at the root for instances up to that many films) is finished by :func:`_bitset_search`:
each candidate becomes the bitset of the node's films holding it (weights expanded, one bit per
film, films with the most attributes first so that deep bitsets end early), so a count is an AND
and a popcount over at most 64 words instead of a pass over the films. At every node there:

* **values and peel** as above (the films holding at least r candidates come from bit-sliced
  "holds at least t" counters), to a fixed point;
* **pairs** — a completion keeps no more films than any two of its candidates together, so two
  candidates are *compatible* when the films holding both reach the threshold; a candidate
  compatible with fewer than r - 1 others is dropped (to a fixed point) and the child on a
  candidate may add only the later candidates compatible with it. At r = 2 the pair counts *are*
  the completions' film counts and update the incumbent; with exactly r candidates left their one
  completion is counted;
* **children** as above (order, value bound, the films holding the candidate and r - 1 later ones).

``bitset_films=0`` in :func:`best_k_set` runs the film-by-film search alone (the kernel before the
bitset search, kept as the benchmark's baseline). Nothing else is cut, so the result is exact.
"""

from __future__ import annotations

import numpy as np
from numba import njit

MAX_ATTRS = 62  # masks are non-negative int64
BITSET_FILMS = 4096  # a node with at most this many films (weights counted) finishes on bitsets
# bit index of a power of two: _DEBRUIJN[(low * 0x03F79D71B4CB0A89 mod 2^64) >> 58]
_DEBRUIJN = np.zeros(64, dtype=np.int64)
for _i in range(64):
    _DEBRUIJN[(((1 << _i) * 0x03F79D71B4CB0A89) % (1 << 64)) >> 58] = _i


def film_masks(bits_by_attr: dict[str, int], names: list[str], n_films: int) -> tuple[np.ndarray, np.ndarray]:
    """(distinct film masks over ``names`` as int64, how many films have each); bit
    ``len(names) - 1 - i`` stands for ``names[i]`` (names sorted)."""
    n = len(names)
    nbytes = (n_films + 7) // 8
    fm = np.zeros(n_films, dtype=np.int64)
    for i, a in enumerate(names):
        col = np.unpackbits(np.frombuffer(bits_by_attr[a].to_bytes(nbytes, "little"), dtype=np.uint8),
                            bitorder="little")[:n_films]
        fm |= col.astype(np.int64) << (n - 1 - i)
    masks, counts = np.unique(fm, return_counts=True)
    return masks, counts.astype(np.int64)


@njit(cache=True, nogil=True)
def _popcount(x: int) -> int:
    x = x - ((x >> 1) & 0x5555555555555555)
    x = (x & 0x3333333333333333) + ((x >> 2) & 0x3333333333333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0F
    return ((x * 0x0101010101010101) >> 56) & 0xFF


@njit(cache=True, nogil=True)
def _bit(low: int) -> int:
    """Index of the single set bit of ``low``."""
    return _DEBRUIJN[((low * 0x03F79D71B4CB0A89) >> 58) & 63]


@njit(cache=True, nogil=True)
def _count(c, col, hi) -> int:
    """Films of the film bitset ``c`` (words ``< hi``) that the column ``col`` holds."""
    v = 0
    for u in range(hi):
        v += _popcount(c[u] & col[u])
    return v


@njit(cache=True, nogil=True)
def _better(f, msk, best_f, best_m, floor) -> bool:
    return f >= floor and (f > best_f or (f == best_f and msk > best_m))


@njit(cache=True, nogil=True)
def _bitset_search(cols, nw, n, p0, rm0, r0, best_f, best_m, floor):  # pragma: no cover - compiled
    """Finish the node (attributes ``p0``, candidates ``rm0``, ``r0`` still to add) whose films
    fit in ``nw`` words: ``cols[j]`` is the bitset of the node's films holding candidate j (one
    bit per film, weights expanded), so every count is an AND and a popcount (module docstring,
    "Bitset search"). Returns (best films, best mask, nodes) with the incumbent updated."""
    nodes = 0
    cap = (r0 + 2) * (n + 1) + 1
    st_p = np.zeros(cap, np.int64)
    st_r = np.zeros(cap, np.int64)
    st_l = np.zeros(cap, np.int64)
    st_bit = np.zeros(cap, np.int64)
    st_hi = np.zeros(cap, np.int64)
    cs = np.zeros((r0 + 2, nw), np.int64)  # the films of the open node at each level
    ge = np.zeros((r0 + 1, nw), np.int64)  # bit-sliced "holds at least t candidates"
    pl = np.zeros((n + 1, nw), np.int64)
    pair = np.zeros(nw, np.int64)
    val = np.zeros(n, np.int64)
    adj = np.zeros(n, np.int64)
    pos = np.zeros(n, np.int64)
    order = np.zeros(n, np.int64)
    suf = np.zeros(n + 1, np.int64)
    for u in range(nw):
        cs[r0, u] = -1  # the bits past the last film are 0 in every column
    st_p[0] = p0
    st_r[0] = rm0
    st_l[0] = r0
    st_bit[0] = -1
    st_hi[0] = nw
    top = 1
    while top > 0:
        top -= 1
        p = st_p[top]
        rm = st_r[top]
        r = st_l[top]
        bit = st_bit[top]
        hi = st_hi[top]
        nodes += 1
        c = cs[r]
        if bit >= 0:  # the parent's films holding the added attribute
            par = cs[r + 1]
            col = cols[bit]
            h = 0
            for u in range(hi):
                x = par[u] & col[u]
                c[u] = x
                if x:
                    h = u + 1
            hi = h
        if best_f < 0:
            theta = floor
        else:  # ties only while the smallest completion still beats the incumbent's list
            comp = 0
            q = 0
            for j in range(n - 1, -1, -1):
                if q < r and (rm >> j) & 1:
                    comp |= 1 << j
                    q += 1
            theta = best_f if (p | comp) > best_m else best_f + 1
            if theta < floor:
                theta = floor
        # values, then the films holding at least r candidates (their values again)
        m = 0
        y = rm
        while y:
            low = y & -y
            y ^= low
            j = _bit(low)
            v = _count(c, cols[j], hi)
            if v >= theta:
                val[j] = v
                pos[m] = j
                m += 1
        if m < r:
            continue
        if r == 1:
            for i in range(m):
                if _better(val[pos[i]], p | (1 << pos[i]), best_f, best_m, floor):
                    best_f = val[pos[i]]
                    best_m = p | (1 << pos[i])
            continue
        while m > r:  # peel to a fixed point
            for u in range(hi):
                ge[0, u] = c[u]
            for t in range(1, r + 1):
                for u in range(hi):
                    ge[t, u] = 0
            for i in range(m):
                col = cols[pos[i]]
                for t in range(min(r, i + 1), 0, -1):
                    for u in range(hi):
                        ge[t, u] |= ge[t - 1, u] & col[u]
            for u in range(hi):
                c[u] = ge[r, u]
            m2 = 0
            for i in range(m):
                j = pos[i]
                v = _count(c, cols[j], hi)
                if v >= theta:
                    val[j] = v
                    pos[m2] = j
                    m2 += 1
            if m2 == m:
                break
            m = m2
        if m < r:
            continue
        if m == r:  # one completion left
            for u in range(hi):
                pair[u] = c[u]
            for i in range(m):
                col = cols[pos[i]]
                for u in range(hi):
                    pair[u] &= col[u]
            msk = p
            for i in range(m):
                msk |= 1 << pos[i]
            f = _count(pair, pair, hi)
            if _better(f, msk, best_f, best_m, floor):
                best_f = f
                best_m = msk
            continue
        # pairs: a completion keeps no more films than any two of its candidates together; at
        # r = 2 these counts are the completions themselves
        live = 0
        for i in range(m):
            adj[pos[i]] = 0
            live |= 1 << pos[i]
        for a in range(m):
            ja = pos[a]
            ca = cols[ja]
            for u in range(hi):
                pair[u] = c[u] & ca[u]
            for b in range(a + 1, m):
                jb = pos[b]
                f = _count(pair, cols[jb], hi)
                if r == 2:
                    msk = p | (1 << ja) | (1 << jb)
                    if _better(f, msk, best_f, best_m, floor):
                        best_f = f
                        best_m = msk
                elif f >= theta:
                    adj[ja] |= 1 << jb
                    adj[jb] |= 1 << ja
        if r == 2:
            continue
        while True:  # candidates compatible with fewer than r - 1 others cannot be in a completion
            drop = 0
            y = live
            while y:
                low = y & -y
                y ^= low
                if _popcount(adj[_bit(low)] & live) < r - 1:
                    drop |= low
            if drop == 0:
                break
            live &= ~drop
        if _popcount(live) < r:
            continue
        m2 = 0
        for i in range(m):
            if (live >> pos[i]) & 1:
                pos[m2] = pos[i]
                m2 += 1
        m = m2
        # children: candidates by value descending (higher bit, i.e. smaller name, first on ties);
        # the child on order[i] may add only later candidates compatible with it
        for i in range(m):
            order[i] = pos[m - 1 - i]
        for i in range(1, m):
            x = order[i]
            q = i - 1
            while q >= 0 and val[order[q]] < val[x]:
                order[q + 1] = order[q]
                q -= 1
            order[q + 1] = x
        suf[m - 1] = 0
        for i in range(m - 2, -1, -1):
            suf[i] = suf[i + 1] | (1 << order[i + 1])
        last = -1
        for i in range(m - r + 1):
            if val[order[i + r - 1]] < theta:
                break
            last = i
        if last < 0:
            continue
        # child-level films: the node's films holding order[i] and >= r - 1 of order[i + 1:]
        for u in range(hi):
            ge[0, u] = c[u]
        for t in range(1, r):
            for u in range(hi):
                ge[t, u] = 0
        for i in range(m - 1, -1, -1):
            if i <= last:
                for u in range(hi):
                    pl[i, u] = ge[r - 1, u]
                if i == 0:
                    break
            col = cols[order[i]]
            for t in range(min(r - 1, m - i), 0, -1):
                for u in range(hi):
                    ge[t, u] |= ge[t - 1, u] & col[u]
        for i in range(last, -1, -1):  # pushed last first: the best child is visited first
            t = order[i]
            rest = suf[i] & adj[t]
            if _popcount(rest) < r - 1 or _count(pl[i], cols[t], hi) < theta:
                continue
            st_p[top] = p | (1 << t)
            st_r[top] = rest
            st_l[top] = r - 1
            st_bit[top] = t
            st_hi[top] = hi
            top += 1
    return best_f, best_m, nodes



@njit(cache=True, nogil=True)
def _search(fm, w, n, k, req, floor, limit):  # pragma: no cover - compiled (exercised through solve)
    """(best films or -1, best mask, nodes) for size k over film masks ``fm`` (weights ``w``);
    nodes with at most ``limit`` films finish in :func:`_bitset_search`."""
    nf = fm.shape[0]
    best_f = -1
    best_m = 0
    nodes = 0
    cap = (k + 2) * (n + 1) + 1
    st_p = np.zeros(cap, np.int64)
    st_r = np.zeros(cap, np.int64)
    st_s = np.zeros(cap, np.int64)
    st_a = np.zeros(cap, np.int64)
    st_b = np.zeros(cap, np.int64)
    st_bit = np.zeros(cap, np.int64)
    buf = np.zeros(nf * (k + 2) + 1, np.int64)
    for i in range(nf):
        buf[i] = i
    pos = np.zeros(n, np.int64)
    val = np.zeros(n, np.int64)
    miss = np.zeros(n, np.float64)
    hs = np.zeros(n, np.float64)
    order = np.zeros(n, np.int64)
    rank = np.zeros(n, np.int64)
    cv = np.zeros(n, np.int64)
    suf = np.zeros(n + 1, np.int64)
    cols = np.zeros((n, (min(limit, int(w.sum())) + 63) // 64), np.int64)
    top = 0
    st_p[0] = req
    st_r[0] = ((1 << n) - 1) & ~req
    st_s[0] = _popcount(req)
    st_a[0] = 0
    st_b[0] = nf
    st_bit[0] = -1
    top = 1
    while top > 0:
        top -= 1
        p = st_p[top]
        rm = st_r[top]
        s = st_s[top]
        a = st_a[top]
        b = st_b[top]
        bit = st_bit[top]
        r = k - s
        nodes += 1
        base = b
        cnt = 0
        for q in range(a, b):
            f = buf[q]
            if bit < 0 or (fm[f] >> bit) & 1:
                buf[base + cnt] = f
                cnt += 1
        # threshold: ties only while the smallest completion still beats the incumbent's list
        if best_f < 0:
            theta = floor
        else:
            comp = 0
            c = 0
            for j in range(n - 1, -1, -1):
                if c < r and (rm >> j) & 1:
                    comp |= 1 << j
                    c += 1
            theta = best_f if (p | comp) > best_m else best_f + 1
            if theta < floor:
                theta = floor
        m = 0
        while True:  # peel to a fixed point
            m = _popcount(rm)
            if m < r:
                break
            for j in range(n):
                val[j] = 0
                miss[j] = 0.0
            kept = 0
            full = 0
            tot = 0
            for q in range(base, base + cnt):
                f = buf[q]
                x = fm[f] & rm
                d = _popcount(x)
                if d >= r:
                    buf[base + kept] = f
                    kept += 1
                    wf = w[f]
                    tot += wf
                    if d == m:
                        full += wf
                    else:  # the films it misses, shared out among the candidates it misses
                        share = wf / (m - d)
                        y = rm & ~x
                        while y:
                            low = y & -y
                            miss[_DEBRUIJN[((low * 0x03F79D71B4CB0A89) >> 58) & 63]] += share
                            y ^= low
                    while x:
                        low = x & -x
                        val[_DEBRUIJN[((low * 0x03F79D71B4CB0A89) >> 58) & 63]] += wf
                        x ^= low
            cnt = kept
            drop = 0
            for j in range(n):
                if (rm >> j) & 1 and val[j] < theta:
                    drop |= 1 << j
            if drop == 0:
                break
            rm &= ~drop
        if m < r:
            continue
        # miss-side bound: a kept film missing z >= 1 candidates counts only if all z are left
        # out (m - r of them), and gives each 1/z; so films <= full + the m - r largest shares
        e = m - r
        if e == 0:
            bound = float(full)
        else:
            c = 0
            for j in range(n):
                if (rm >> j) & 1:
                    hs[c] = miss[j]
                    c += 1
            hs[:c].sort()
            bound = full + hs[c - e:c].sum()
        if bound + 1e-6 < theta:
            continue
        if r >= 2 and tot <= limit:  # few films left: finish the node on bitsets
            nw = (tot + 63) >> 6
            for j in range(n):
                for u in range(nw):
                    cols[j, u] = 0
            i = 0
            for q in range(base, base + cnt):
                f = buf[q]
                x = fm[f] & rm
                for _ in range(w[f]):
                    y = x
                    while y:
                        low = y & -y
                        y ^= low
                        cols[_bit(low), i >> 6] |= 1 << (i & 63)
                    i += 1
            best_f, best_m, sub = _bitset_search(cols, nw, n, p, rm, r, best_f, best_m, floor)
            nodes += sub
            continue
        m = 0
        for j in range(n - 1, -1, -1):
            if (rm >> j) & 1:
                pos[m] = j
                m += 1
        if r == 1:
            for j in range(m):
                f = val[pos[j]]
                msk = p | (1 << pos[j])
                if f >= floor and (f > best_f or (f == best_f and msk > best_m)):
                    best_f = f
                    best_m = msk
            continue
        # order candidates by value descending (stable: higher bit, i.e. smaller name, first)
        for j in range(m):
            order[j] = j
        for j in range(1, m):
            x = order[j]
            q = j - 1
            while q >= 0 and val[pos[order[q]]] < val[pos[x]]:
                order[q + 1] = order[q]
                q -= 1
            order[q + 1] = x
        suf[m - 1] = 0
        for j in range(m - 2, -1, -1):
            suf[j] = suf[j + 1] | (1 << pos[order[j + 1]])
        last = -1
        for i in range(m - r + 1):
            if val[pos[order[i + r - 1]]] < theta:
                break
            last = i
        # child-level films: a kept film counts for the child on position i when it holds that
        # candidate and at least r - 1 of the candidates after it
        for i in range(m):
            rank[pos[order[i]]] = i
            cv[i] = 0
        for q in range(base, base + cnt):
            f = buf[q]
            x = fm[f] & rm
            lx = 0
            y = x
            while y:
                low = y & -y
                lx |= 1 << rank[_DEBRUIJN[((low * 0x03F79D71B4CB0A89) >> 58) & 63]]
                y ^= low
            y = lx
            while y:
                low = y & -y
                i = _DEBRUIJN[((low * 0x03F79D71B4CB0A89) >> 58) & 63]
                y ^= low
                if _popcount(y) < r - 1:
                    break
                cv[i] += w[f]
        for i in range(last, -1, -1):  # pushed last first: the best child is visited first
            if cv[i] < theta:
                continue
            t = pos[order[i]]
            st_p[top] = p | (1 << t)
            st_r[top] = suf[i]
            st_s[top] = s + 1
            st_a[top] = base
            st_b[top] = base + cnt
            st_bit[top] = t
            top += 1
    return best_f, best_m, nodes


def best_k_set(masks: np.ndarray, counts: np.ndarray, n: int, k: int, req: int, floor: int,
               bitset_films: int = BITSET_FILMS) -> tuple[tuple[int, int] | None, int]:
    """((films, mask) of the best K-set holding ``req`` and keeping >= ``floor`` films, or None;
    nodes visited). Only films holding ``req`` and at least k attributes can count. Nodes with at
    most ``bitset_films`` films finish on bitsets (0: never; module docstring)."""
    sel = ((masks & req) == req) & (np.bitwise_count(masks) >= k)
    fm, w = masks[sel], counts[sel]
    # films with the most attributes first: deep nodes keep mostly those, so their bitsets end early
    o = np.argsort(-np.bitwise_count(fm), kind="stable")
    fm, w = np.ascontiguousarray(fm[o]), np.ascontiguousarray(w[o])
    if req.bit_count() == k:
        films = int(w.sum())
        return ((films, req) if films >= floor else None), 1
    if not len(fm):
        return None, 0
    f, m, nodes = _search(fm, w, n, k, req, floor, bitset_films)
    return ((int(f), int(m)) if f >= 0 else None), int(nodes)
