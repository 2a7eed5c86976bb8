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
shared buffer above its parent's. Nothing else is cut, so the result is exact.
"""

from __future__ import annotations

import numpy as np
from numba import njit

MAX_ATTRS = 62  # masks are non-negative int64
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
def _search(fm, w, n, k, req, floor):  # pragma: no cover - compiled (exercised through solve)
    """(best films or -1, best mask, nodes) for size k over film masks ``fm`` (weights ``w``)."""
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
            for q in range(base, base + cnt):
                f = buf[q]
                x = fm[f] & rm
                d = _popcount(x)
                if d >= r:
                    buf[base + kept] = f
                    kept += 1
                    wf = w[f]
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


def best_k_set(masks: np.ndarray, counts: np.ndarray, n: int, k: int, req: int, floor: int
               ) -> tuple[tuple[int, int] | None, int]:
    """((films, mask) of the best K-set holding ``req`` and keeping >= ``floor`` films, or None;
    nodes visited). Only films holding ``req`` and at least k attributes can count."""
    sel = ((masks & req) == req) & (np.bitwise_count(masks) >= k)
    fm, w = np.ascontiguousarray(masks[sel]), np.ascontiguousarray(counts[sel])
    if req.bit_count() == k:
        films = int(w.sum())
        return ((films, req) if films >= floor else None), 1
    if not len(fm):
        return None, 0
    f, m, nodes = _search(fm, w, n, k, req, floor)
    return ((int(f), int(m)) if f >= 0 else None), int(nodes)
