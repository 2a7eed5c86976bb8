"""The compiled per-K kernel (validators/coverage_batch.py, issue 18 point 3): the film-by-film
search, the bitset search it hands small nodes to, and both against plain enumeration."""

from __future__ import annotations

import math
import random
import sys
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest

from validators.coverage_batch import best_k_set, film_masks
from validators.coverage_optimizer import load_bitsets, rank_attributes, solve, solve_subset_search

REPO = Path(__file__).resolve().parent.parent


def brute(masks: np.ndarray, counts: np.ndarray, n: int, k: int, req: int, floor: int):
    """Every K-set by ``itertools.combinations``: the largest (films, mask) keeping >= floor."""
    best = None
    for combo in combinations(range(n), k):
        m = sum(1 << j for j in combo)
        if m & req != req:
            continue
        f = int(counts[(masks & m) == m].sum())
        if f >= floor and (best is None or (f, m) > best):
            best = (f, m)
    return best


def random_masks(rng: random.Random, n: int, n_films: int) -> tuple[np.ndarray, np.ndarray]:
    """Distinct film masks and their multiplicities: tie-heavy, dense correlated (a popularity
    factor, as in the benchmark's dense class) or independent availability."""
    style = rng.random()
    ease = [rng.uniform(-1.5, 2.5) for _ in range(n)]
    slope = rng.choice([0.8, 2.0])
    rows = []
    for _ in range(n_films):
        pop = rng.gauss(0, 1)
        x = 0
        for j in range(n):
            if style < 0.25:
                hit = rng.random() < 0.9
            elif style < 0.75:
                hit = rng.random() < 1 / (1 + math.exp(-(pop + ease[j]) * slope))
            else:
                hit = rng.random() < (ease[j] + 1.5) / 4
            x |= int(hit) << j
        rows.append(x)
    masks, counts = np.unique(np.array(rows, dtype=np.int64), return_counts=True)
    return masks, counts.astype(np.int64)


@pytest.mark.parametrize("bitset_films", [0, 40, 4096])
@pytest.mark.parametrize("seed", range(3))
def test_kernel_equals_brute_force_for_every_k(seed, bitset_films):
    """0: the film-by-film search alone; 40: it hands nodes of <= 40 films to the bitset search;
    4096: the bitset search from the root."""
    rng = random.Random(300 + seed)
    for _ in range(25):
        n = rng.randint(2, 11)
        masks, counts = random_masks(rng, n, rng.randint(3, 300))
        for k in range(1, n + 1):
            req = (1 << rng.randrange(n)) if rng.random() < 0.3 else 0
            floor = rng.choice([1, 1, 1, 2, 7, 25])
            found, nodes = best_k_set(masks, counts, n, k, req, floor, bitset_films=bitset_films)
            assert found == brute(masks, counts, n, k, req, floor), (seed, n, k, req, floor, bitset_films)
            assert nodes >= (1 if found is not None else 0)


def _bench():
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    from benchmarks import bench_coverage

    return bench_coverage


def _masks(pairs):
    bits, n_films = load_bitsets(pairs)
    names = sorted(rank_attributes(bits))
    masks, counts = film_masks(bits, names, n_films)
    return masks, counts, len(names)


def test_dense_correlated_29_languages_bitset_equals_film_by_film_search():
    """The issue-18 class at full width: both kernels give the same optimum for every K (the
    film-by-film one is the kernel the bitset search replaced), and the bitset path is taken."""
    masks, counts, n = _masks(_bench().dense_instance(4, 400))
    assert n == 29
    differ = 0
    for k in range(1, n + 1):
        new, new_nodes = best_k_set(masks, counts, n, k, 0, 1)
        old, old_nodes = best_k_set(masks, counts, n, k, 0, 1, bitset_films=0)
        assert new == old, k
        differ += new_nodes != old_nodes
    assert differ > 0


def test_dense_correlated_instance_of_16_languages_equals_the_subset_search_and_brute_force():
    pairs = _bench().dense_instance(9, 250, langs=_bench().LANGS[:16])
    r = solve(pairs)
    assert r["per_k"] == solve_subset_search(pairs)["per_k"]
    masks, counts, n = _masks(pairs)
    names = sorted(rank_attributes(load_bitsets(pairs)[0]))
    for k in (6, 9, 12):
        films, mask = brute(masks, counts, n, k, 0, 1)
        e = r["per_k"][k - 1]["search"]
        assert e["films"] == films
        assert e["attributes"] == [a for i, a in enumerate(names) if mask >> (n - 1 - i) & 1]
