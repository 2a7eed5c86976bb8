"""Stage ``collection`` (SPEC B2): Variety top-N ∩ (likely) public domain ∩ sound film on the
Internet Archive, with the evidence of every criterion for every ranked film.

Two lookups in Python, the set logic in sql/pd_collection.sql:

* link each ranked film to its registration (:func:`link_registration`): the catalog title and
  release year of an IMDb-keyed film (a title-keyed film: the alias itself and the ranking year),
  against the registrations' titles (``validators.copyright_match.title_similarity`` ≥
  ``hollywood.film_title_min``) within a year window; two equally good registrations of
  different dates make the link ``ambiguous_registration`` (never guessed);
* find the film on the Internet Archive (:func:`ia_query`): an IA search ``mediatype:movies`` on
  the title's words, the best item whose title and year agree, and its ``sound`` metadata.

The SQL judges each ranked film as of ``hollywood.as_of`` (the run date unless frozen): a film
released before the 95-year line is public domain by its release date even with no registration
linked (rule ``R1_release_date``, the year and its source in the evidence); an IA item without
sound metadata, a failed search, an ambiguous registration or an uncertain status make the
film's verdict ``needs_review`` (with ``review_reasons``), never a silent drop.
"""

from __future__ import annotations

import re
from collections import Counter
from datetime import date
from typing import Any

import duckdb

from flows.kernel_context import RunContext
from cinesub.state import sql_text
from flows.stages.hollywood.common import PDStage, ia_client, replace_rows

_OPERATORS = {"and", "or", "not", "to"}


def title_words(title: str) -> list[str]:
    from validators.copyright_match import normalize_title

    return [w for w in normalize_title(title).split() if w not in _OPERATORS]


def ia_query(title: str) -> str | None:
    words = title_words(title)
    return f"mediatype:movies AND title:({' '.join(words)})" if words else None


def _year(value: Any) -> int | None:
    m = re.match(r"(1[89]\d\d|20\d\d)", str(value or ""))
    return int(m.group(1)) if m else None


def link_registration(title: str, years: tuple[int, int], registrations: list[tuple[str, date | None, str]],
                      min_similarity: float) -> dict[str, Any]:
    """The registration of a ranked film: best title similarity inside ``years`` (inclusive),
    ties broken by nothing — two registrations of different dates at the best score are
    ``ambiguous_registration``."""
    from validators.copyright_match import title_similarity

    scored = []
    for reg_id, reg_date, reg_title in registrations:
        if reg_date is None or not (years[0] <= reg_date.year <= years[1]):
            continue
        sim = title_similarity(title, reg_title or "")
        if sim >= min_similarity:
            scored.append((sim, reg_id, reg_date, reg_title))
    if not scored:
        return {"reg_id": None, "reg_date": None, "reg_title": None, "similarity": None, "reason": "no_registration"}
    scored.sort(key=lambda s: (-s[0], s[2], s[1]))
    best = scored[0]
    rivals = [s for s in scored[1:] if s[0] == best[0] and (s[1], s[2]) != (best[1], best[2])]
    if rivals:
        return {"reg_id": None, "reg_date": None, "reg_title": best[3], "similarity": best[0],
                "reason": "ambiguous_registration"}
    return {"reg_id": best[1], "reg_date": best[2], "reg_title": best[3], "similarity": best[0], "reason": "linked"}


def pick_ia_item(title: str, film_year: int | None, docs: list[dict[str, Any]], min_similarity: float
                 ) -> dict[str, Any]:
    """The IA film item for a film among search results (title ≥ ``min_similarity``, year ±1)."""
    from validators.copyright_match import title_similarity

    best = None
    for d in docs:
        sim = title_similarity(title, str(d.get("title") or ""))
        y = _year(d.get("year")) or _year(d.get("date"))
        if sim < min_similarity or (film_year and y and abs(y - film_year) > 1):
            continue
        key = (-sim, abs((y or film_year or 0) - (film_year or 0)), d["identifier"])
        if best is None or key < best[0]:
            best = (key, d, y)
    if best is None:
        return {"ia_item": None, "ia_title": None, "ia_year": None, "sound": None,
                "reason": "title_mismatch" if docs else "not_on_ia"}
    _, d, y = best
    raw = str(d.get("sound") or "").strip().lower()
    sound = "sound" if raw.startswith("sound") else "silent" if raw.startswith("silent") else None
    return {"ia_item": d["identifier"], "ia_title": d.get("title"), "ia_year": y, "sound": sound, "reason": "found"}


def bind_collection_inputs(con: duckdb.DuckDBPyConnection, as_of: date) -> None:
    """Bind the state DB's tables and the status date as the inputs of sql/pd_collection.sql,
    then create its views (cc_candidates, cc_collection, cc_audit)."""
    for name, table in (("top100", "pd_top100"), ("links", "pd_film_links"), ("status", "pd_status"),
                        ("matches", "pd_matches"), ("ia", "pd_film_ia"), ("source_works", "pd_source_works")):
        con.execute(f"CREATE OR REPLACE TEMP VIEW cc_{name} AS SELECT * FROM {table}")
    bind_as_of(con, as_of)
    con.execute(sql_text("pd_collection.sql"))


def write_collection(con: duckdb.DuckDBPyConnection, as_of: date) -> dict[str, Any]:
    """Judge every ranked film as of ``as_of`` (sql/pd_collection.sql over the state tables
    pd_top100, pd_film_links, pd_status, pd_matches, pd_film_ia, pd_source_works), write
    pd_collection_candidates / pd_collection / pd_collection_audit; return the counts."""
    bind_collection_inputs(con, as_of)
    for view, table in (("cc_candidates", "pd_collection_candidates"), ("cc_collection", "pd_collection"),
                        ("cc_audit", "pd_collection_audit")):
        con.execute(f"DELETE FROM {table}")
        con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM {view} ORDER BY ALL")
    n = con.execute("SELECT count(*) FROM pd_collection").fetchone()[0]
    excl: Counter[str] = Counter()
    review: Counter[str] = Counter()
    for reasons, why_review in con.execute(
            "SELECT exclusion_reasons, review_reasons FROM pd_collection_candidates WHERE NOT included").fetchall():
        for r in (reasons or "").split(","):
            if r:
                excl[r.split(":")[0]] += 1
        for r in (why_review or "").split(","):
            if r:
                review[r] += 1
    verdicts = dict(con.execute(
        "SELECT verdict, count(*) FROM pd_collection_candidates GROUP BY ALL ORDER BY ALL").fetchall())
    by_release = con.execute(
        "SELECT count(*) FROM pd_collection_candidates WHERE rule = 'R1_release_date'").fetchone()[0]
    return {"collection": n, "excluded_by": dict(excl), "as_of": as_of.isoformat(), "verdicts": verdicts,
            "needs_review": verdicts.get("needs_review", 0), "review_by": dict(review),
            "public_domain_by_release_date": by_release}


def bind_as_of(con: duckdb.DuckDBPyConnection, as_of: date) -> None:
    """The ``cc_params`` input of sql/pd_collection.sql: the status date (release-date rule R1)."""
    con.execute(f"CREATE OR REPLACE TEMP VIEW cc_params AS SELECT DATE '{as_of.isoformat()}' AS as_of")


class CollectionStage(PDStage):
    name = "collection"
    version = "2"  # 2: public domain by release date (R1_release_date), verdict needs_review
    uses_as_of = True
    reads = ("pd_top100", "pd_status", "pd_matches", "pd_catalog_films", "pd_source_works")
    writes = ("pd_film_links", "pd_film_ia", "pd_collection_candidates", "pd_collection", "pd_collection_audit")
    retries = 1
    asks_archive = True

    def items_in_out(self, stats: dict[str, Any]) -> tuple[int | None, int | None, dict[str, int]]:
        return stats.get("ranked"), stats.get("collection"), dict(stats.get("excluded_by") or {})

    def run(self, ctx: RunContext, con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
        from extractors.providers.errors import ProviderError

        min_sim = ctx.settings.hollywood.film_title_min
        registrations = con.execute(
            "SELECT reg_id, reg_date, title FROM pd_status ORDER BY reg_date NULLS LAST, reg_id").fetchall()
        catalog = {i: (t, y) for i, t, y in con.execute("SELECT imdb, title, year FROM pd_catalog_films").fetchall()}
        ranked = con.execute("SELECT year, key, key_kind FROM pd_top100 ORDER BY year, rank").fetchall()
        client = ia_client(ctx)
        links, found = [], []
        searched: dict[str, list[dict[str, Any]] | str] = {}
        failures = 0
        for year, key, kind in ranked:
            if kind == "imdb" and key in catalog:
                title, film_year = catalog[key]
                window = (film_year - 1, film_year + 1) if film_year else (year - 3, year + 1)
            else:
                title, film_year, window = key, None, (year - 3, year + 1)
            link = link_registration(title, window, registrations, min_sim)
            links.append({"year": year, "key": key, "title": title, "film_year": film_year, **link})
            q = ia_query(title)
            if q is None:
                found.append({"year": year, "key": key, "query": None, "ia_item": None, "ia_title": None,
                              "ia_year": None, "sound": None, "reason": "not_on_ia"})
                continue
            if q not in searched:
                try:
                    searched[q] = client.search(q, fields=["identifier", "title", "year", "date", "sound"])
                except ProviderError as exc:
                    searched[q] = f"search_failed:{exc.reason_code}"
                    failures += 1
            docs = searched[q]
            if isinstance(docs, str):
                found.append({"year": year, "key": key, "query": q, "ia_item": None, "ia_title": None,
                              "ia_year": None, "sound": None, "reason": docs})
                continue
            ref_year = film_year or (link["reg_date"].year if link["reg_date"] else None)
            found.append({"year": year, "key": key, "query": q, **pick_ia_item(title, ref_year, docs, min_sim)})
        replace_rows(con, "pd_film_links", links)
        replace_rows(con, "pd_film_ia", found)
        stats: dict[str, Any] = {"ranked": len(ranked), **write_collection(con, ctx.settings.hollywood.as_of),
                                 "links": dict(Counter(link["reason"] for link in links)),
                                 "ia": dict(Counter(f["reason"] for f in found)), "ia_searches": len(searched)}
        if failures:
            stats["incomplete"] = True
        return stats
