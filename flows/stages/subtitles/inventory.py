"""Stage ``inventory``: read the review pages and IMDb data (SPEC A1), resolve entities by IMDb
id, queue disagreeing links for adjudication, and normalise national ratings (SPEC A8).

Every source document is stored in the raw store first (content-addressed) and parsed from
there, so an inventory can be re-derived from the bytes it was built from.
"""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path
from typing import Any

import duckdb

from cinesub.rawstore import RawStore
from cinesub.records import utcnow
from flows.kernel_context import RunContext, Stage


def _norm_title(title: str | None) -> str:
    t = unicodedata.normalize("NFKD", title or "").encode("ascii", "ignore").decode().lower()
    return re.sub(r"[^a-z0-9]+", " ", t).strip()


class InventoryStage(Stage):
    name = "inventory"
    version = "1"
    reads = ("link_reviews", "link_decisions")  # curator decisions change the films rows
    # link_reviews: new disagreements enter the adjudication queue, applied decisions are shown there
    writes = ("sources", "films", "ratings", "unmapped_ratings", "source_errors", "link_reviews")
    retries = 2

    def items_in_out(self, stats: dict[str, Any]) -> tuple[int | None, int | None, dict[str, int]]:
        # KIM pages in, films with a canonical IMDb id out, the others by id status
        st = stats.get("imdb_id_status") or {}
        return stats.get("kim_pages"), st.get("ok", 0), {k: v for k, v in st.items() if k != "ok"}

    def external_inputs(self, ctx: RunContext) -> dict[str, Any]:
        return ctx.env.inventory_inputs()

    def run(self, ctx: RunContext, con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
        from extractors.sources.csm import parse_csm
        from extractors.sources.imdb import canonical_imdb_id, parse_imdb_title, read_title_basics, read_title_ratings
        from extractors.sources.kim import parse_kim
        from cinesub.state import sql_text
        from validators.entity_link import resolve_disagreement
        from validators.ratings import normalize_certificates

        root, mirror = ctx.env.source_pages()
        store = RawStore.for_settings(ctx.settings)
        source_rows: list[list[Any]] = []

        def keep(source: str, key: str, path: Path, url: str | None) -> str:
            data = path.read_bytes()
            sha, _ = store.put(data)
            source_rows.append([source, key, url, sha, utcnow()])
            return data.decode("utf-8")

        page_errors: list[list[Any]] = []  # source_errors rows: one page that raised, the others parsed

        def page_failed(source: str, key: str, exc: Exception) -> dict[str, str]:
            sha = next((r[3] for r in reversed(source_rows) if r[0] == source and r[1] == key), None)
            detail = (str(exc) or repr(exc))[:300]
            page_errors.append([source, key, sha, "internal_error", type(exc).__name__, detail])
            return {"reason": "internal_error", "error_type": type(exc).__name__, "detail": detail}

        # --- IMDb datasets ------------------------------------------------------------------
        basics_path, ratings_path = root / "imdb" / "title.basics.tsv", root / "imdb" / "title.ratings.tsv"
        keep("imdb_basics", "title.basics.tsv", basics_path, None)
        keep("imdb_ratings", "title.ratings.tsv", ratings_path, None)
        basics = {r["tconst"]: r for r in read_title_basics(basics_path).to_dicts()}
        ratings = {r["tconst"]: r for r in read_title_ratings(ratings_path).to_dicts()}

        # --- CSM pages, indexed by IMDb id and by (title, year) --------------------------------
        csm_by_id: dict[str, Any] = {}
        csm_by_title: dict[tuple[str, int | None], list[Any]] = {}
        for path in sorted((root / "csm").glob("*.html")):
            url = f"https://www.commonsensemedia.org/movie-reviews/{path.stem}"
            try:
                rec = parse_csm(keep("csm", path.stem, path, url), url)
                cid, status = canonical_imdb_id(rec.imdb_link)
            except Exception as exc:  # this page is a source_errors row; the others are parsed
                page_failed("csm", path.stem, exc)
                continue
            if status == "ok":
                csm_by_id.setdefault(cid, rec)
            csm_by_title.setdefault((_norm_title(rec.title), rec.year), []).append((rec, cid))

        films: list[list[Any]] = []
        reviews: list[list[Any]] = []
        n_pages = 0
        con.execute(sql_text("link_decisions.sql"))  # the entity-link decision in force per KIM page
        decided = dict(con.execute("SELECT kim_id, decision FROM link_decision_in_force").fetchall())
        for path in sorted((root / "kim").glob("*.html")):
            n_pages += 1
            url = f"https://kids-in-mind.com/{path.stem}.htm"
            try:
                kim = parse_kim(keep("kim", path.stem, path, url), url)
                imdb_id, id_status = canonical_imdb_id(kim.imdb_link)
            except Exception as exc:  # recorded as gate-1 drop (and a source_errors row), never skipped
                films.append([path.stem, None, None, url, None, None, "unparsed", None, None, None,
                              "not_checked", json.dumps(page_failed("kim", path.stem, exc)), None, None])
                continue
            csm, csm_id, link_status = None, None, "no_csm"
            if id_status == "ok":
                if imdb_id in csm_by_id:
                    csm, csm_id, link_status = csm_by_id[imdb_id], imdb_id, "agree"
                else:
                    same_title = csm_by_title.get((_norm_title(kim.title), kim.year), [])
                    if same_title:
                        csm, csm_id = same_title[0]
                        link_status = "disagree"
                        reviews.append([kim.kim_id, imdb_id, csm_id, csm.url,
                                        "csm_imdb_link_disagrees" if csm_id else "csm_imdb_link_missing"])
                        imdb_id, link_status = resolve_disagreement(decided.get(kim.kim_id), imdb_id, csm_id)
            imdb_rec = None
            if id_status == "ok" and imdb_id in basics:
                try:
                    imdb_rec = self._imdb(root, imdb_id, basics[imdb_id], ratings.get(imdb_id), keep,
                                          parse_imdb_title)
                except Exception as exc:  # no IMDb record (gate 3) and a source_errors row
                    page_failed("imdb_title", imdb_id, exc)
            films.append([
                kim.kim_id, kim.title, kim.year, kim.url, kim.imdb_link, imdb_id if id_status == "ok" else None,
                id_status, csm.csm_id if csm else None, csm.url if csm else None, csm_id, link_status,
                kim.model_dump_json(), csm.model_dump_json() if csm else None,
                imdb_rec.model_dump_json() if imdb_rec else None,
            ])

        # --- ratings (SPEC A8) ---------------------------------------------------------------
        rating_rows, unmapped_rows = [], []
        for row in films:
            imdb_json = row[13]
            if not imdb_json:
                continue
            certs = json.loads(imdb_json).get("certificates") or []
            try:
                mapped, unmapped = normalize_certificates(certs)
            except Exception as exc:  # this film's certificates are a source_errors row, not a crash
                page_failed("imdb_certificates", row[5], exc)
                continue
            for r in mapped:
                rating_rows.append([row[5], r.country, r.label, r.minimum_age, r.ordinal,
                                    getattr(r, "raw", None) or "", r.rule or ""])
            for u in unmapped:
                unmapped_rows.append([row[5], getattr(u, "raw", str(u)), getattr(u, "reason", "unmapped")])

        con.execute("BEGIN")
        try:
            for table in ("films", "ratings", "unmapped_ratings", "source_errors"):
                con.execute(f"DELETE FROM {table}")
            if page_errors:
                con.executemany("INSERT OR REPLACE INTO source_errors VALUES (?, ?, ?, ?, ?, ?)", page_errors)
            con.executemany("INSERT OR REPLACE INTO sources VALUES (?, ?, ?, ?, ?)", source_rows)
            con.executemany("INSERT INTO films VALUES (" + ",".join("?" * 14) + ")", films)
            # New disagreements enter the adjudication queue; decisions already taken are kept.
            for r in reviews:
                con.execute(
                    """INSERT INTO link_reviews (kim_id, kim_imdb_id, csm_imdb_id, csm_url, reason)
                       VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING""", r)
            con.execute("""UPDATE link_reviews SET decision = d.decision, decided_by = d.decided_by,
                           decided_at = d.decided_at FROM link_decision_in_force d
                           WHERE link_reviews.kim_id = d.kim_id""")  # the queue shows what was applied
            if rating_rows:
                con.executemany("INSERT OR REPLACE INTO ratings VALUES (?, ?, ?, ?, ?, ?, ?)", rating_rows)
            if unmapped_rows:
                con.executemany("INSERT INTO unmapped_ratings VALUES (?, ?, ?)", unmapped_rows)
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        statuses: dict[str, int] = {}
        for row in films:
            statuses[row[6]] = statuses.get(row[6], 0) + 1
        return {"mirror": mirror, "kim_pages": n_pages, "csm_pages": sum(len(v) for v in csm_by_title.values()),
                "imdb_id_status": statuses, "link_reviews": len(reviews),
                "ratings": len(rating_rows), "unmapped_ratings": len(unmapped_rows),
                "source_errors": len(page_errors)}

    @staticmethod
    def _imdb(root: Path, imdb_id: str, basics_row: dict, ratings_row: dict | None, keep, parse_imdb_title):
        base = root / "imdb" / "title" / imdb_id
        pages = {}
        for page in ("index", "plotsummary", "parentalguide"):
            p = base / f"{page}.html"
            url = f"https://www.imdb.com/title/{imdb_id}/" + ("" if page == "index" else page)
            pages[page] = keep(f"imdb_{page}", imdb_id, p, url) if p.exists() else ""
        row = dict(basics_row)
        if ratings_row:
            row.update(ratings_row)
        return parse_imdb_title(pages["index"], pages["plotsummary"], pages["parentalguide"], row)
