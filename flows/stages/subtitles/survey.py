"""Stage ``survey``: the paper's selection run by the build (SPEC A7; docs/coverage.md
"Selection run by the build").

1. **Availability survey.** For every film past gate 4 (sql/eligible_films.sql) one search-only
   query to the primary provider lists its subtitle items per language over the language pool
   (OpenSubtitles: one ``languages=a,b,…`` query, every result page; no download, so no quota is
   spent). A film whose search fails is a recorded ``availability`` row (``search_failed`` with the
   reason), never a crash; the stage is then incomplete and runs again next build.
2. **Languages.** The exact complete-coverage search (:func:`validators.coverage_optimizer.solve`)
   over the ``selection.language_pool_size`` most available languages, with the required languages
   (English), ``selection.languages_min_films`` and K = ``selection.languages_k`` (or the best K of
   all: ``optimum``) chooses the languages the acquire stage acquires.
3. **Rating countries.** Over the films that have every chosen language (the paper starts from its
   1,231-film multilingual cohort), a film has a country when the inventory mapped one of its
   certificates into that country's label space (``ratings``) or lists a rated certificate of a
   country without one (``unmapped_ratings`` reason ``other_country``); a film whose only entries
   are Unrated/Not Rated therefore has none and is dropped first. The same search over the
   ``selection.country_pool_size`` most available countries chooses ``selection.countries_k``. A
   country can be released only with a SPEC A8 label space: when the optimum holds one without,
   the choice is the optimum among the countries that have one (mode ``survey_label_space``).

``fixed`` modes take ``Settings.languages`` / ``Settings.countries``; the survey and the per-K
tables are recorded all the same.

Incremental (docs/rebuilds.md): a film's answer is kept (:func:`survey_cache`) by the film, the
environment's digest of what its provider answers depend on (``Environment.search_inputs``, as
the acquire stage's search cache) and the code and settings of the query; a build asks again only
a film whose digest changed, whose answer is older than ``providers.search_ttl_hours`` or that has
none (a failed search keeps none), and every film under ``--refresh-search``/``--force``, a TTL of
0 or fault modes. Outputs: ``availability``, ``selected_attributes`` (the chosen
sets in release order), ``selection_per_k`` (search and frequency prefix for every K).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import duckdb

from cinesub.bulk import insert_rows
from cinesub.state import sql_text, transaction
from flows.kernel_context import RunContext, Stage
from flows.stages.subtitles.common import coverage_solver
from flows.stages.subtitles.item_cache import ItemCache

#: ``availability.language`` of the row that records a failed search over every language
ALL_LANGUAGES = "*"


def survey_cache(ctx: RunContext, provider: Any) -> ItemCache:
    """The availability answers of ``provider`` under ``CINESUB_HOME/cache/survey/`` (no cache
    when the environment's answers may not be reused: fault modes), keyed by this module, the
    provider clients (extractors/providers/, extractors/http_client.py), the environment's module
    and what the environment says answers the queries (``Environment.answer_code``: in a
    sample build, the fixture servers); the provider's name and the subtitle
    flow's config hash (the pool, the page cap, the provider options)."""
    import sys

    import extractors.http_client as http_client
    import extractors.providers as providers

    here = Path(__file__).resolve()
    code = [here, here.with_name("item_cache.py"), Path(http_client.__file__),
            *sorted(Path(providers.__file__).parent.glob("*.py")), Path(sys.modules[type(ctx.env).__module__].__file__),
            *ctx.env.answer_code()]
    root = ctx.settings.home / "cache" / "survey" if ctx.env.search_cacheable else None
    return ItemCache(root, code, provider.name, ctx.settings.config_hash())


def release_order(chosen: list[str], defined: tuple[str, ...], required: tuple[str, ...] = ()) -> list[str]:
    """The chosen attributes in release order: required first, then the defined order
    (``Settings.languages`` / the SPEC A8 country order), then by name."""
    pos = {a: i for i, a in enumerate(defined)}
    req = [a for a in required if a in chosen]
    rest = sorted((a for a in chosen if a not in req), key=lambda a: (pos.get(a, len(pos)), a))
    return req + rest


def has_label_space(country: str) -> bool:
    from validators.ratings import canonical_country, load_rules

    c = canonical_country(country)
    return c is not None and c in load_rules().labels


def country_of(raw: str) -> str | None:
    """The country of a rated certificate string (None: malformed, or Unrated/Not Rated, banned,
    refused, exempt, withdrawn: no rating)."""
    import re

    from validators.ratings import canonical_country, split_certificate

    parts = split_certificate(raw)
    if parts is None:
        return None
    country, label, _ = parts
    if re.fullmatch(r"(?i)\(?\s*(not\s*rated|unrated|nr|banned|refused[\w ]*|exempt|withdrawn)\s*\)?", label):
        return None
    return canonical_country(country) or country


def choose(pairs: list[tuple[str, str | None]], *, pool: int | None, k: int | str, require: tuple[str, ...],
           min_films: int, solve: Any = None) -> tuple[dict[str, Any] | None, dict[str, Any] | None, str | None]:
    """``(solve result, chosen entry, why not)`` for one dimension: the search optimum for size
    ``k`` (``"optimum"``: the best of every K). No availability, a required attribute nobody has
    or an infeasible K gives ``(result, None, reason)``. ``solve``: the solver (default
    :func:`validators.coverage_optimizer.solve`; the stage passes the cached one)."""
    if solve is None:
        from validators.coverage_optimizer import solve

    present = {a for _, a in pairs if a}
    if not present:
        return None, None, "no_availability"
    missing = [r for r in require if r not in present]
    if missing:
        return None, None, f"required_unavailable: {','.join(missing)}"
    result = solve(pairs, pool=pool, require=list(require), min_films=min_films)
    if k == "optimum":
        entry = result["best"]
    else:
        entry = next((row["search"] for row in result["per_k"] if row["k"] == k), None)
    if entry is None:
        return result, None, f"infeasible: k={k} over a pool of {len(result['pool'])} (min_films {min_films})"
    return result, entry, None


class SurveyStage(Stage):
    name = "survey"
    version = "1"
    # availability: the survey's own last answers, so that an unchanged answer leaves the stage
    # (and everything after it) reused
    reads = ("films", "ratings", "unmapped_ratings", "availability")
    writes = ("availability", "selected_attributes", "selection_per_k")
    retries = 1

    def items_in_out(self, stats: dict[str, Any]) -> tuple[int | None, int | None, dict[str, int]]:
        return stats.get("films"), stats.get("surveyed"), {"search_failed": stats.get("search_failed", 0)}

    def external_inputs(self, ctx: RunContext) -> dict[str, Any]:
        return {"providers": ctx.env.acquire_inputs(ctx.run_id)}

    # ------------------------------------------------------------------------------------------
    def run(self, ctx: RunContext, con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
        sel = ctx.settings.selection
        con.execute(sql_text("eligible_films.sql"))
        films = [r[0] for r in con.execute("SELECT DISTINCT imdb_id FROM eligible_films ORDER BY 1").fetchall()]
        rows, stats = self._survey(ctx, films)
        avail = [(imdb, lang) for imdb, lang, items, *_ in rows if items and lang != ALL_LANGUAGES]
        failed = {imdb for imdb, _, items, _, status, _ in rows if status == "search_failed"}
        # every surveyed film counts as a film, with or without languages
        lang_pairs: list[tuple[str, str | None]] = [(f, None) for f in films if f not in failed] + avail

        per_k: list[list[Any]] = []
        chosen_rows: list[list[Any]] = []
        solve = coverage_solver(ctx)

        # -- languages -----------------------------------------------------------------------
        required = tuple(sel.languages_required)
        result, entry, why = choose(lang_pairs, pool=sel.language_pool_size, k=sel.languages_k,
                                    require=required, min_films=sel.languages_min_films, solve=solve)
        per_k += self._per_k("languages", result)
        if sel.languages_mode == "fixed" or entry is None:
            languages, lmode = list(ctx.settings.languages), "fixed"
            if sel.languages_mode != "fixed":
                stats["languages_fallback"] = why
        else:
            languages, lmode = release_order(entry["attributes"], tuple(ctx.settings.languages), required), "survey"
        chosen_rows += [["languages", a, i, lmode] for i, a in enumerate(languages, start=1)]
        stats["languages"] = {"mode": lmode, "chosen": languages, "search": entry,
                              "prefix": self._prefix(result, len(languages))}

        # -- rating countries, over the films that have every chosen language ----------------------
        by_film: dict[str, set[str]] = {}
        for imdb, lang in avail:
            by_film.setdefault(imdb, set()).add(lang)
        cohort = sorted(f for f, langs in by_film.items() if set(languages) <= langs)
        country_pairs, dropped_unrated = self._country_pairs(con, cohort)
        creq = tuple(sel.countries_required)
        cres, centry, cwhy = choose(country_pairs, pool=sel.country_pool_size, k=sel.countries_k, require=creq,
                                    min_films=sel.countries_min_films, solve=solve)
        per_k += self._per_k("countries", cres)
        cmode = "survey"
        unconstrained = centry
        if centry is not None and not all(has_label_space(c) for c in centry["attributes"]):
            spaced = [(f, c) for f, c in country_pairs if c is None or has_label_space(c)]
            _, centry, cwhy = choose(spaced, pool=sel.country_pool_size, k=sel.countries_k, require=creq,
                                     min_films=sel.countries_min_films, solve=solve)
            cmode = "survey_label_space"
            stats["countries_without_label_space"] = sorted(c for c in unconstrained["attributes"]
                                                            if not has_label_space(c))
        if sel.countries_mode == "fixed" or centry is None:
            countries, cmode = list(ctx.settings.countries), "fixed"
            if sel.countries_mode != "fixed":
                stats["countries_fallback"] = cwhy
        else:
            from validators.ratings import COUNTRY_ORDER

            countries = release_order(centry["attributes"], tuple(COUNTRY_ORDER), creq)
        chosen_rows += [["countries", a, i, cmode] for i, a in enumerate(countries, start=1)]
        stats["countries"] = {"mode": cmode, "chosen": countries, "search": unconstrained,
                              "prefix": self._prefix(cres, len(countries)), "films": len(cohort),
                              "dropped_unrated_only": dropped_unrated}

        with transaction(con):
            for table, new in (("availability", rows), ("selected_attributes", chosen_rows),
                               ("selection_per_k", per_k)):
                con.execute(f"DELETE FROM {table}")
                insert_rows(con, table, new)
        if stats["search_failed"]:
            stats["incomplete"] = True  # the next build asks again for the films that failed
        return stats

    # ------------------------------------------------------------------------------------------
    def _survey(self, ctx: RunContext, films: list[str]) -> tuple[list[list[Any]], dict[str, Any]]:
        """One availability query per film to the primary provider, unless its cached answer
        stands (:func:`survey_cache`); rows of ``availability``."""
        sel = ctx.settings.selection
        stats: dict[str, Any] = {"films": len(films), "surveyed": 0, "search_failed": 0, "truncated": 0,
                                 "survey_cached": 0}
        providers = ctx.env.subtitle_providers() if films else []
        rows: list[list[Any]] = []
        if not providers:
            return rows, stats
        primary = providers[0]
        pool = list(sel.language_pool) if sel.language_pool else None
        stats["provider"] = primary.name
        found: dict[str, dict[str, int]] = {}
        status: dict[str, tuple[str, str | None]] = {}
        cache = survey_cache(ctx, primary)
        ttl = ctx.settings.providers.search_ttl_hours
        refresh = ctx.force or ctx.refresh_search or ttl <= 0
        now = time.time()
        digests = ctx.env.search_inputs(films)
        for imdb in films:
            key = json.dumps([imdb, digests.get(imdb), pool, sel.survey_max_pages])
            hit = None if refresh else cache.get(key, valid=lambda v: now - ttl * 3600 <= v["at"] <= now and all(
                isinstance(n, int) for n in v["items"].values()) and isinstance(v["truncated"], bool))
            try:
                if hit is not None:
                    items, truncated = hit["items"], hit["truncated"]
                    stats["survey_cached"] += 1
                elif hasattr(primary, "availability"):
                    ans = primary.availability(imdb, pool, max_pages=sel.survey_max_pages)
                    items, truncated = dict(ans["items"]), bool(ans.get("truncated"))
                else:  # a provider without a multi-language listing: one search per language
                    look = (lambda i, lang: primary.scan(i, lang).candidates) if hasattr(primary, "scan") \
                        else primary.search
                    items = {lang: len(look(imdb, lang)) for lang in (pool or ctx.settings.languages)}
                    truncated = False
            except Exception as exc:  # one film's failure is its row, never the stage's
                code = getattr(exc, "reason_code", None) or type(exc).__name__
                text = str(exc)
                status[imdb] = ("search_failed", (text if text.startswith(f"{code}:") else f"{code}: {text}")[:500])
                stats["search_failed"] += 1
                continue
            found[imdb] = {k: int(v) for k, v in items.items() if k}
            if hit is None:  # an answer (a failure is none): the next build reuses it while it stands
                cache.put(key, {"items": found[imdb], "truncated": truncated, "at": now})
            status[imdb] = ("truncated", f"more than {sel.survey_max_pages} result pages") if truncated else ("ok", None)
            stats["surveyed"] += 1
            stats["truncated"] += int(truncated)
        languages = sorted(set(pool or ()) | {lang for items in found.values() for lang in items})
        for imdb in films:
            st, reason = status[imdb]
            if st == "search_failed":
                for lang in (pool or [ALL_LANGUAGES]):
                    rows.append([imdb, lang, None, primary.name, st, reason])
                continue
            for lang in languages:
                rows.append([imdb, lang, found[imdb].get(lang, 0), primary.name, st, reason])
        stats["languages_listed"] = len(languages)
        return rows, stats

    @staticmethod
    def _country_pairs(con: duckdb.DuckDBPyConnection, cohort: list[str]) -> tuple[list[tuple[str, str | None]], int]:
        """(film, country) availability of the cohort films, and how many of them were dropped
        because their only certificate entries are Unrated/Not Rated."""
        if not cohort:
            return [], 0
        con.execute("CREATE OR REPLACE TEMP TABLE survey_cohort (imdb_id VARCHAR)")
        insert_rows(con, "survey_cohort", [[f] for f in cohort])
        mapped = con.execute(
            "SELECT r.imdb_id, r.country FROM ratings r JOIN survey_cohort c USING (imdb_id)").fetchall()
        other = con.execute(
            """SELECT u.imdb_id, u.raw FROM unmapped_ratings u JOIN survey_cohort c USING (imdb_id)
               WHERE u.reason = 'other_country'""").fetchall()
        unrated = {r[0] for r in con.execute(
            """SELECT u.imdb_id FROM unmapped_ratings u JOIN survey_cohort c USING (imdb_id)
               WHERE u.reason = 'unrated'""").fetchall()}
        pairs: set[tuple[str, str]] = set(mapped)
        for imdb, raw in other:
            c = country_of(raw)
            if c:
                pairs.add((imdb, c))
        with_country = {f for f, _ in pairs}
        dropped = len(unrated - with_country)
        kept = [f for f in cohort if f in with_country]  # a film with no rated entry is dropped first
        return [(f, None) for f in kept] + sorted(pairs), dropped

    @staticmethod
    def _per_k(dimension: str, result: dict[str, Any] | None) -> list[list[Any]]:
        if result is None:
            return []
        out = []
        for row in result["per_k"]:
            for method in ("search", "prefix"):
                r = row.get(method)
                out.append([dimension, row["k"], method, ",".join(r["attributes"]) if r else None,
                            r["films"] if r else None, r["score"] if r else None])
        return out

    @staticmethod
    def _prefix(result: dict[str, Any] | None, k: int) -> dict[str, Any] | None:
        if result is None:
            return None
        return next((row["prefix"] for row in result["per_k"] if row["k"] == k), None)
