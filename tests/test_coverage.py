"""Exact complete-coverage optimisation (SPEC A7; validators/coverage_optimizer.py, ``cinesub coverage``)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from validators.coverage_optimizer import CoverageError, solve, solve_subset_search

REPO = Path(__file__).resolve().parent.parent


# --------------------------------------------------------------------------------------------
# an independent reference: sets, every subset visited, no bitsets, no pruning
# --------------------------------------------------------------------------------------------
def _per_film(pairs):
    films: dict[str, set[str]] = {}
    for f, a in pairs:
        films.setdefault(f, set())
        if a:
            films[f].add(a)
    return films


def reference(pairs, pool=None, ks=None, require=(), min_films=0):
    films = _per_film(pairs)
    freq: dict[str, int] = {}
    for attrs in films.values():
        for a in attrs:
            freq[a] = freq.get(a, 0) + 1
    ranked = sorted(freq, key=lambda a: (-freq[a], a))
    chosen = set(ranked if pool is None else ranked[:pool]) | set(require)
    ks = range(1, len(chosen) + 1) if ks is None else ks
    # exhaustive: every subset of the chosen attributes, depth first, its films the intersection of
    # its parent's with one more attribute's set; the best of each size is the least
    # (-k*m, -m, sorted names), whatever the order the subsets come in
    names = sorted(chosen)
    holders = [frozenset(f for f, attrs in films.items() if a in attrs) for a in names]
    wanted, required = set(ks), set(require)
    best: dict[int, tuple] = {}
    deepest = max(wanted, default=0)

    def visit(start: int, combo: list[str], inter: frozenset) -> None:
        for i in range(start, len(names)):
            c, x = [*combo, names[i]], inter & holders[i]
            k = len(c)
            if k in wanted and required <= set(c):
                m = len(x)
                key = (-k * m, -m, c)
                if m >= min_films and (k not in best or key < best[k][0]):
                    best[k] = (key, {"attributes": c, "films": m, "score": k * m})
            if k < deepest:
                visit(i + 1, c, x)

    visit(0, [], frozenset(films))
    return {k: best[k][1] if k in best else None for k in ks}


def random_instance(rng: random.Random, n_attr: int, n_films: int):
    attrs = [f"l{i:02d}" for i in range(n_attr)]
    rng.shuffle(attrs)  # names unrelated to frequency
    ps = [rng.random() ** rng.choice([0.3, 1, 2]) for _ in attrs]
    style = rng.random()
    pairs = []
    for f in range(n_films):
        fid = f"tt{f:07d}"
        pairs.append((fid, ""))  # films with no attribute still count as films
        pop = rng.random()
        for a, p in zip(attrs, ps):
            if style < 0.15:  # heavy ties: many attributes nearly universal
                hit = rng.random() < 0.95
            elif style < 0.5:  # correlated: popular films have many attributes
                hit = rng.random() < p * (0.3 + pop)
            else:
                hit = rng.random() < p
            if hit:
                pairs.append((fid, a))
    return pairs


def _present(pairs):
    return sorted({a for _, a in pairs if a})


# --------------------------------------------------------------------------------------------
# exactness
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(8))
def test_equals_brute_force_on_random_instances(seed):
    rng = random.Random(1000 + seed)
    for _ in range(30):
        pairs = random_instance(rng, rng.randint(1, 12), rng.randint(1, 60))
        present = _present(pairs)
        if not present:
            continue
        r = solve(pairs)
        ref = reference(pairs)
        assert [e["k"] for e in r["per_k"]] == list(range(1, len(present) + 1))
        for e in r["per_k"]:
            assert e["search"] == ref[e["k"]], (seed, e["k"], pairs)
        best = min((v for v in ref.values() if v), key=lambda v: (-v["score"], -v["films"], v["attributes"]))
        assert r["best"] == best


@pytest.mark.parametrize("seed", range(6))
def test_equals_brute_force_with_pool_require_min_films_and_fixed_k(seed):
    rng = random.Random(2000 + seed)
    for _ in range(30):
        pairs = random_instance(rng, rng.randint(2, 12), rng.randint(5, 60))
        present = _present(pairs)
        if len(present) < 2:
            continue
        pool = rng.choice([None, rng.randint(1, len(present))])
        require = rng.sample(present, rng.randint(0, 2))
        min_films = rng.choice([0, 1, 3, 10, 30])
        r = solve(pairs, pool=pool, require=require, min_films=min_films)
        n_pool = len(r["pool"])
        ref = reference(pairs, pool=pool, ks=range(1, n_pool + 1), require=require, min_films=min_films)
        for e in r["per_k"]:
            assert e["search"] == ref[e["k"]], (seed, e["k"], pool, require, min_films)
            if e["search"] is not None:
                assert set(require) <= set(e["search"]["attributes"])
                assert e["search"]["films"] >= min_films
        k = rng.randint(1, n_pool + 1)
        fixed = solve(pairs, pool=pool, k=k, require=require, min_films=min_films)
        assert [e["k"] for e in fixed["per_k"]] == [k]
        assert fixed["per_k"][0]["search"] == reference(pairs, pool=pool, ks=[k], require=require,
                                                      min_films=min_films)[k]


def test_correlated_instance_of_20_attributes_equals_brute_force():
    rng = random.Random(7)
    pairs = []
    for f in range(300):
        pop = rng.gauss(0, 1)
        for i in range(20):
            if rng.random() < 1 / (1 + 2.718 ** (-(pop - (i / 5 - 1.5)) * 1.5)):
                pairs.append((f"f{f}", f"a{i:02d}"))
    r = solve(pairs)
    ref = reference(pairs, ks=range(1, 21))
    assert {e["k"]: e["search"] for e in r["per_k"]} == ref


# --------------------------------------------------------------------------------------------
# semantics
# --------------------------------------------------------------------------------------------
def spec_shape() -> dict[str, set[str]]:
    """SPEC A7 in miniature: the top-5 prefix is the best prefix, yet the best set has six
    languages and one of them (vi) ranks only 8th by frequency."""
    avail: dict[str, set[str]] = {}
    core = [f"c{i:03d}" for i in range(300)]
    extra = [f"e{i:03d}" for i in range(200)]
    for f in core:
        avail[f] = {"en", "ar", "id", "fa", "ro", "vi"}

    def add(lang, films):
        for f in films:
            avail.setdefault(f, set()).add(lang)

    add("en", extra)
    add("ar", extra[0:150])
    add("id", extra[50:200])
    add("fa", extra[0:75] + extra[125:200])
    add("ro", extra[25:175])
    add("es", core[:200] + extra[:160])
    add("fr", core[100:] + extra[40:200])
    add("pt", core[:150] + extra[:100])
    return avail


def test_spec_shape_low_ranked_language_enters_the_best_set():
    r = solve(spec_shape())
    ranked = [p["attribute"] for p in r["pool"]]
    assert ranked.index("vi") == 7  # 8th by frequency
    assert r["best"] == {"attributes": ["ar", "en", "fa", "id", "ro", "vi"], "films": 300, "score": 1800}
    prefixes = [e["prefix"] for e in r["per_k"]]
    best_prefix = max(prefixes, key=lambda p: p["score"])
    assert best_prefix == {"attributes": ["ar", "en", "fa", "id", "ro"], "films": 350, "score": 1750}
    assert r["best"]["score"] > best_prefix["score"]
    for e in r["per_k"]:
        assert e["search"]["score"] >= e["prefix"]["score"]


def test_prefix_baseline_is_top_k_by_frequency_with_required_forced_in():
    r = solve(spec_shape())
    assert r["per_k"][2]["prefix"] == {"attributes": ["ar", "en", "fa"], "films": 400, "score": 1200}
    assert r["per_k"][5]["prefix"]["attributes"] == ["ar", "en", "es", "fa", "id", "ro"]
    forced = solve(spec_shape(), require=["pt"])
    assert forced["per_k"][0] == {"k": 1, "search": {"attributes": ["pt"], "films": 250, "score": 250},
                                  "prefix": {"attributes": ["pt"], "films": 250, "score": 250}}
    # pt forced in, then the most frequent others: en, ar
    assert forced["per_k"][2]["prefix"]["attributes"] == ["ar", "en", "pt"]


def test_pool_restricts_and_required_attribute_outside_the_pool_joins_it():
    r = solve(spec_shape(), pool=5)
    assert [p["attribute"] for p in r["pool"]] == ["en", "ar", "fa", "id", "ro"]
    assert len(r["per_k"]) == 5 and r["best"]["score"] == 1750
    r = solve(spec_shape(), pool=5, require=["vi"])
    assert [p["attribute"] for p in r["pool"]] == ["en", "ar", "fa", "id", "ro", "vi"]
    assert r["best"]["attributes"] == ["ar", "en", "fa", "id", "ro", "vi"]
    assert r["per_k"][0]["search"]["attributes"] == ["vi"]


def test_min_films_and_fixed_k():
    r = solve(spec_shape(), min_films=400)
    by_k = {e["k"]: e["search"] for e in r["per_k"]}
    assert by_k[4] == {"attributes": ["ar", "en", "id", "ro"], "films": 400, "score": 1600}
    assert by_k[5] is None and by_k[9] is None  # infeasible: no crash, null
    assert r["best"] == by_k[4]
    r = solve(spec_shape(), k=7)
    assert [e["k"] for e in r["per_k"]] == [7]
    assert r["best"] == {"attributes": ["ar", "en", "es", "fa", "id", "ro", "vi"], "films": 200, "score": 1400}
    assert solve(spec_shape(), max_k=3)["best"]["score"] == 1275


def test_infeasible_sizes_are_null():
    avail = spec_shape()
    assert solve(avail, min_films=10_000)["best"] is None
    assert all(e["search"] is None for e in solve(avail, min_films=10_000)["per_k"])
    r = solve(avail, k=20)  # larger than the pool
    assert r["per_k"] == [{"k": 20, "search": None, "prefix": None}] and r["best"] is None
    r = solve(avail, require=["vi", "pt"], max_k=3)
    assert r["per_k"][0] == {"k": 1, "search": None, "prefix": None}  # fewer slots than required
    assert set(r["per_k"][1]["search"]["attributes"]) == {"vi", "pt"}


def test_zero_film_sets_tie_and_break_to_the_smallest_names():
    # disjoint attributes: every 2-set keeps no film
    pairs = [("f1", "b"), ("f2", "a"), ("f3", "c"), ("f4", "c")]
    r = solve(pairs)
    assert r["per_k"][0]["search"] == {"attributes": ["c"], "films": 2, "score": 2}
    assert r["per_k"][1]["search"] == {"attributes": ["a", "b"], "films": 0, "score": 0}
    assert solve(pairs, min_films=1)["per_k"][1]["search"] is None


def test_ties_break_on_smallest_attribute_list():
    # four identical attributes: every K-set ties, the lexicographically smallest wins
    pairs = [(f"f{i}", a) for i in range(5) for a in ("d", "b", "c", "a")]
    r = solve(pairs)
    assert [e["search"]["attributes"] for e in r["per_k"]] == [["a"], ["a", "b"], ["a", "b", "c"], ["a", "b", "c", "d"]]
    assert r["best"]["attributes"] == ["a", "b", "c", "d"]


def test_input_forms_agree_and_errors():
    avail = spec_shape()
    pairs = [(f, a) for f, attrs in avail.items() for a in sorted(attrs)]
    assert solve(avail)["per_k"] == solve(pairs + pairs[:10])["per_k"]  # duplicates are harmless
    with pytest.raises(CoverageError, match="xx"):
        solve(avail, require=["xx"])
    with pytest.raises(CoverageError):
        solve(avail, k=0)


# --------------------------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------------------------
def cli(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CINESUB_")}
    return subprocess.run([sys.executable, "-m", "cinesub.cli", "coverage", "solve", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=180)


def write_csv(path: Path, avail: dict[str, set[str]], header: str = "film_id,attribute") -> Path:
    lines = [header] + [f"{f},{a}" for f, attrs in sorted(avail.items()) for a in sorted(attrs)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_cli_json(tmp_path):
    csv_path = write_csv(tmp_path / "avail.csv", spec_shape())
    p = cli(str(csv_path), "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert {"best", "per_k", "elapsed_s"} <= set(out)
    assert out["best"] == {"attributes": ["ar", "en", "fa", "id", "ro", "vi"], "films": 300, "score": 1800}
    assert out["per_k"][4]["prefix"]["score"] == 1750
    p = cli(str(csv_path), "--json", "--k", "3", "--require", "vi,pt", "--min-films", "10", "--pool", "4")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert [e["k"] for e in out["per_k"]] == [3]
    assert set(out["best"]["attributes"]) >= {"vi", "pt"} and out["best"]["films"] >= 10
    p = cli(str(csv_path), "--max-k", "2")
    assert p.returncode == 0 and "best: ar,en" in p.stdout


def test_cli_errors(tmp_path):
    p = cli(str(tmp_path / "missing.csv"), "--json")
    assert p.returncode == 2 and "no such file" in p.stderr
    bad = write_csv(tmp_path / "bad.csv", spec_shape(), header="film,language")
    p = cli(str(bad), "--json")
    assert p.returncode == 2 and "bad header" in p.stderr
    ok = write_csv(tmp_path / "ok.csv", spec_shape())
    p = cli(str(ok), "--json", "--require", "en,klingon")
    assert p.returncode == 2 and "klingon" in p.stderr


def _bench():
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    from benchmarks import bench_coverage

    return bench_coverage


# --------------------------------------------------------------------------------------------
# correlated availability (issue 18 point 3): the closed-set search vs brute force and vs the
# previous subset search
# --------------------------------------------------------------------------------------------
def test_seeded_popularity_and_regional_instances_equal_brute_force():
    dense_instance, instance = _bench().dense_instance, _bench().instance
    langs = ["en", "es", "fr", "ar", "tr", "ro", "pl", "de", "id", "vi"]  # five regional groups
    for seed in range(2):
        for pairs in (instance(seed, 60, langs=langs), dense_instance(seed, 60, langs=langs)):
            r = solve(pairs)
            ref = reference(pairs, ks=range(1, len(_present(pairs)) + 1))
            assert {e["k"]: e["search"] for e in r["per_k"]} == ref, seed
            assert r["stats"]["nodes"] >= 1


def test_solve_equals_the_subset_search_on_a_dense_instance():
    pairs = _bench().dense_instance(5, 200, langs=_bench().LANGS[:16])
    new, old = solve(pairs), solve_subset_search(pairs)
    assert new["per_k"] == old["per_k"] and new["best"] == old["best"]
    assert len(new["per_k"]) == 16
    assert new["stats"]["method"] == "per_k_compiled" and old["stats"]["method"] == "subset"
    for k in (3, 12):
        assert solve(pairs, k=k, require=["en"], min_films=2)["per_k"] == \
            solve_subset_search(pairs, k=k, require=["en"], min_films=2)["per_k"]


def test_dense_correlated_instance_of_14_languages_equals_brute_force():
    pairs = _bench().dense_instance(3, 120, langs=_bench().LANGS[:14])
    r = solve(pairs)
    assert r["stats"]["method"] == "per_k_compiled"
    assert {e["k"]: e["search"] for e in r["per_k"]} == reference(pairs, ks=range(1, 15))
    fixed = solve(pairs, k=9, require=["fr", "pt"], min_films=5)
    assert fixed["per_k"][0]["search"] == reference(pairs, ks=[9], require=["fr", "pt"], min_films=5)[9]


def test_pools_wider_than_the_kernel_use_the_closed_set_search():
    from validators.coverage_batch import MAX_ATTRS

    rng = random.Random(11)
    attrs = [f"x{i:02d}" for i in range(MAX_ATTRS + 4)]
    pairs = [(f"f{f}", a) for f in range(40) for a in rng.sample(attrs, rng.randint(1, 5))]
    pairs += [(f"g{i % 9}", a) for i, a in enumerate(attrs)]  # every attribute present
    r = solve(pairs, max_k=8)
    assert len(r["pool"]) > MAX_ATTRS
    assert r["stats"]["method"] == "closed"
    assert r["per_k"] == solve_subset_search(pairs, max_k=8)["per_k"]
    ref = reference(pairs, ks=[1, 2])
    assert [e["search"] for e in r["per_k"][:2]] == [ref[1], ref[2]]


def adversarial() -> dict[str, set[str]]:
    """Where the frequency prefix and greedy both fail: a, b, c are the most frequent but their
    films barely overlap; x, y, z are rarer but share one large cohort."""
    avail: dict[str, set[str]] = {}
    for i in range(60):  # the cohort: x, y, z (and d) together
        avail[f"k{i}"] = {"x", "y", "z", "d"}
    for grp, lang in (("p", "a"), ("q", "b"), ("r", "c")):
        for i in range(70):  # each frequent language on its own films, plus a shared thin core
            avail[f"{grp}{i}"] = {lang, "d"}
    for i in range(25):
        avail[f"s{i}"] = {"a", "b", "c", "d"}
    return avail


def _greedy(avail, k):
    chosen: list[str] = []
    attrs = sorted({a for s in avail.values() for a in s})
    for _ in range(k):
        best = max((a for a in attrs if a not in chosen),
                   key=lambda a: (sum(1 for s in avail.values() if set(chosen + [a]) <= s), [-ord(ch) for ch in a]))
        chosen.append(best)
    return sum(1 for s in avail.values() if set(chosen) <= s)


def test_adversarial_instance_prefix_and_greedy_fail_search_is_exact():
    avail = adversarial()
    pairs = [(f, a) for f, attrs in avail.items() for a in attrs]
    r = solve(avail)
    ref = reference(pairs)
    assert {e["k"]: e["search"] for e in r["per_k"]} == ref
    k4 = r["per_k"][3]
    assert k4["search"] == {"attributes": ["d", "x", "y", "z"], "films": 60, "score": 240}
    assert k4["prefix"]["attributes"] == ["a", "b", "c", "d"] and k4["prefix"]["films"] == 25
    assert _greedy(avail, 4) < 60  # greedy starts with d, then a frequent one, and is stuck
    assert solve_subset_search(avail)["per_k"] == r["per_k"]
