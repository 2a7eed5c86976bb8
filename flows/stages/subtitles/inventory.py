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

from cinesub.bulk import insert_rows
from cinesub.rawstore import RawStore
from cinesub.records import utcnow
from flows.kernel_context import RunContext, Stage


def _norm_title(title: str | None) -> str:
    t = unicodedata.normalize("NFKD", title or "").encode("ascii", "ignore").decode().lower()
    return re.sub(r"[^a-z0-9]+", " ", t).strip()


class InventoryStage(Stage):
    name = "inventory"
    version = "2"  # 2: IMDb datasets streamed by id (crew, principals, akas, names); votes, original title
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
        from extractors.sources.imdb import canonical_imdb_id, parse_imdb_title
        from extractors.sources.kim import parse_kim
        from cinesub.state import sql_text, transaction
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

        # --- IMDb datasets: stored (streamed), read after the review pages, filtered by id -------
        imdb_datasets = self._keep_datasets(root, store, source_rows)
        imdb_pending: list[tuple[int, str]] = []  # (films row, IMDb id) whose record is read below

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
        # kim/<letter>/<slug>.html: kim_id = "<letter>/<slug>" (ids contain "/"; read recursively)
        kim_pages = sorted(((p.relative_to(root / "kim").with_suffix("").as_posix(), p)
                            for p in (root / "kim").rglob("*.html")), key=lambda kp: kp[0])
        for kim_key, path in kim_pages:
            n_pages += 1
            url = f"https://kids-in-mind.com/{kim_key}.htm"
            try:
                kim = parse_kim(keep("kim", kim_key, path, url), url)
                imdb_id, id_status = canonical_imdb_id(kim.imdb_link)
            except Exception as exc:  # recorded as gate-1 drop (and a source_errors row), never skipped
                films.append([kim_key, None, None, url, None, None, "unparsed", None, None, None,
                              "not_checked", json.dumps(page_failed("kim", kim_key, exc)), None, None])
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
            if id_status == "ok":
                imdb_pending.append((len(films), imdb_id))
            films.append([
                kim.kim_id, kim.title, kim.year, kim.url, kim.imdb_link, imdb_id if id_status == "ok" else None,
                id_status, csm.csm_id if csm else None, csm.url if csm else None, csm_id, link_status,
                kim.model_dump_json(), csm.model_dump_json() if csm else None,
                imdb_rec.model_dump_json() if imdb_rec else None,
            ])

        # --- IMDb records: the datasets for the wanted ids, then the title pages ----------------
        imdb_facts, imdb_stats = self._read_imdb_facts(root, imdb_pending, imdb_datasets)
        for i, imdb_id in imdb_pending:
            if imdb_id not in imdb_facts:
                continue  # not in title.basics: no IMDb record (gate 3 says so)
            try:
                films[i][13] = self._imdb(root, imdb_id, imdb_facts[imdb_id], keep, parse_imdb_title).model_dump_json()
            except Exception as exc:  # no IMDb record (gate 3) and a source_errors row
                page_failed("imdb_title", imdb_id, exc)

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

        with transaction(con):
            for table in ("films", "ratings", "unmapped_ratings", "source_errors"):
                con.execute(f"DELETE FROM {table}")
            insert_rows(con, "source_errors", page_errors, replace=True)
            insert_rows(con, "sources", source_rows, replace=True)
            insert_rows(con, "films", films)
            # New disagreements enter the adjudication queue; decisions already taken are kept.
            for r in reviews:
                con.execute(
                    """INSERT INTO link_reviews (kim_id, kim_imdb_id, csm_imdb_id, csm_url, reason)
                       VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING""", r)
            con.execute("""UPDATE link_reviews SET decision = d.decision, decided_by = d.decided_by,
                           decided_at = d.decided_at FROM link_decision_in_force d
                           WHERE link_reviews.kim_id = d.kim_id""")  # the queue shows what was applied
            insert_rows(con, "ratings", rating_rows, replace=True)
            insert_rows(con, "unmapped_ratings", unmapped_rows)
        statuses: dict[str, int] = {}
        for row in films:
            statuses[row[6]] = statuses.get(row[6], 0) + 1
        return {"mirror": mirror, "kim_pages": n_pages, "csm_pages": sum(len(v) for v in csm_by_title.values()),
                "imdb_id_status": statuses, "link_reviews": len(reviews),
                "ratings": len(rating_rows), "unmapped_ratings": len(unmapped_rows),
                "source_errors": len(page_errors), "imdb_datasets": imdb_stats}

    #: the ``sources`` name of each IMDb dataset
    DATASET_SOURCES = {"title.basics.tsv": "imdb_basics", "title.ratings.tsv": "imdb_ratings",
                       "title.crew.tsv": "imdb_crew", "title.principals.tsv": "imdb_principals",
                       "title.akas.tsv": "imdb_akas", "name.basics.tsv": "imdb_names"}

    @classmethod
    def _keep_datasets(cls, root: Path, store: RawStore, source_rows: list[list[Any]]) -> dict[str, Path | None]:
        """Every IMDb dataset present into the raw store (streamed: never a whole file in memory)
        and one ``sources`` row each; returns where each dataset lies (None: absent)."""
        from extractors.sources.imdb_datasets import dataset_paths

        paths = dataset_paths(root / "imdb")
        for name, path in paths.items():
            if path is not None:
                sha, _ = store.put_file(path)
                source_rows.append([cls.DATASET_SOURCES[name], name, None, sha, utcnow()])
        return paths

    @staticmethod
    def _read_imdb_facts(root: Path, pending: list[tuple[int, str]], paths: dict[str, Path | None]):
        """The dataset facts of the wanted titles (:func:`read_imdb_facts`, streamed, filtered by
        id) and the stage's ``imdb_datasets`` stats: titles wanted/found, datasets missing (their
        fields then come from the title pages), names name.basics did not resolve."""
        from cinesub.errors import UsageError
        from extractors.sources.imdb_datasets import read_imdb_facts

        if paths.get("title.basics.tsv") is None:
            raise UsageError(f"no IMDb title.basics.tsv under {root / 'imdb'} (mirror the sources first: "
                             "cinesub sources mirror)", "inputs_missing")
        wanted = sorted({tt for _, tt in pending})
        facts, st = read_imdb_facts(root / "imdb", wanted)
        return facts, {"wanted": len(wanted), "found": len(facts), "missing": st["missing"],
                       "unresolved_names": st["unresolved_names"]}

    @staticmethod
    def _imdb(root: Path, imdb_id: str, facts: dict, keep, parse_imdb_title):
        base = root / "imdb" / "title" / imdb_id
        pages = {}
        for page in ("index", "plotsummary", "parentalguide"):
            p = base / f"{page}.html"
            url = f"https://www.imdb.com/title/{imdb_id}/" + ("" if page == "index" else f"{page}/")
            pages[page] = keep(f"imdb_{page}", imdb_id, p, url) if p.exists() else ""
        return parse_imdb_title(pages["index"], pages["plotsummary"], pages["parentalguide"], facts)
