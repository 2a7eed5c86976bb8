"""Entity-link decisions (docs/review.md): the pure resolution rule, and gate 3 of the funnel
(sql/eligible_films.sql, sql/funnel.sql) and the decision in force (sql/link_decisions.sql) over
a small state database. The end-to-end test (decide, rebuild, the film's gate changes) is
tests/test_review.py::test_link_decision_is_honoured_by_the_next_build."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import duckdb
import pytest

from cinesub.state import init_state, sql_text
from validators.entity_link import CHOICES, LINK_STATUS, PASSING, resolve_disagreement

KIM, CSM = "tt1000001", "tt2000002"


@pytest.mark.parametrize(("decision", "expected"), [
    (None, (KIM, "disagree")),
    ("accept_kim", (KIM, "accepted_kim")),
    ("accept_csm", (CSM, "accepted_csm")),
    ("reject", (KIM, "rejected")),
])
def test_resolve_disagreement(decision, expected):
    assert resolve_disagreement(decision, KIM, CSM) == expected


def test_accept_csm_without_a_csm_id_leaves_it_open_and_unknown_decisions_raise():
    assert resolve_disagreement("accept_csm", KIM, None) == (KIM, "disagree")
    with pytest.raises(ValueError, match="unknown entity-link decision"):
        resolve_disagreement("accept_both", KIM, CSM)
    assert set(CHOICES.values()) == set(LINK_STATUS)
    assert {LINK_STATUS["accept_kim"], LINK_STATUS["accept_csm"]} <= set(PASSING)
    assert LINK_STATUS["reject"] not in PASSING


IMDB = json.dumps({"runtime_min": 100, "synopsis": "s", "plot": "p", "certificates": ["UK:15"]})


@pytest.fixture()
def con(tmp_path):
    db = tmp_path / "state.duckdb"
    init_state(db)
    c = duckdb.connect(str(db))
    films = [  # kim_id, imdb_id, link_status, csm_imdb_id
        ("a-agree", "tt0000001", "agree", "tt0000001"),
        ("b-open", "tt0000002", "disagree", "tt0000092"),
        ("c-kim", "tt0000003", "accepted_kim", "tt0000093"),
        ("d-csm", "tt0000094", "accepted_csm", "tt0000094"),
        ("e-reject", "tt0000005", "rejected", "tt0000095"),
        ("f-nocsm", "tt0000006", "no_csm", None),
    ]
    for kim_id, imdb_id, status, csm_id in films:
        c.execute("INSERT INTO films (kim_id, imdb_id, imdb_id_status, csm_imdb_id, link_status, imdb) "
                  "VALUES (?, ?, 'ok', ?, ?, ?)", [kim_id, imdb_id, csm_id, status, IMDB])
    c.execute("CREATE TEMP TABLE wanted_languages (language VARCHAR)")
    c.execute("CREATE TEMP TABLE wanted_countries (country VARCHAR)")
    yield c
    c.close()


def test_gate_3_follows_the_applied_decision(con):
    con.execute(sql_text("eligible_films.sql"))
    con.execute(sql_text("funnel.sql"))
    eligible = {r[0] for r in con.execute("SELECT kim_id FROM eligible_films").fetchall()}
    assert eligible == {"a-agree", "c-kim", "d-csm"}
    gates = {r[0]: r[1:] for r in con.execute("SELECT kim_id, dropped_at, reason, detail FROM film_gate_eval").fetchall()}
    assert gates["b-open"] == (3, "csm_link_disagrees", "kim tt0000002 vs csm tt0000092")
    assert gates["e-reject"] == (3, "csm_link_rejected", "kim tt0000005 vs csm tt0000095")
    assert gates["f-nocsm"][:2] == (3, "csm_page_missing")
    for kim_id in ("a-agree", "c-kim", "d-csm"):  # past gate 3 (no subtitles here: gate 5)
        assert gates[kim_id][:2] == (5, "not_acquired"), kim_id


def test_the_latest_decision_is_in_force(con):
    t = datetime(2026, 1, 1, tzinfo=timezone.utc)
    rows = [("20260101T000000000000Z-aaaa", "b-open", "reject", t),
            ("20260101T000100000000Z-bbbb", "b-open", "accept_kim", t + timedelta(minutes=1)),
            ("20260101T000000000000Z-cccc", "c-kim", "accept_kim", t)]
    con.execute("INSERT INTO link_reviews (kim_id, kim_imdb_id, csm_imdb_id, reason) VALUES "
                "('b-open', 'tt0000002', 'tt0000092', 'csm_imdb_link_disagrees'), "
                "('c-kim', 'tt0000003', 'tt0000093', 'csm_imdb_link_disagrees'), "
                "('legacy', 'tt0000007', 'tt0000097', 'csm_imdb_link_disagrees')")
    con.execute("UPDATE link_reviews SET decision = 'reject', decided_by = 'old' WHERE kim_id = 'legacy'")
    for did, kim_id, decision, at in rows:
        con.execute("INSERT INTO link_decisions VALUES (?, ?, ?, NULL, NULL, 'n', 'x', ?)", [did, kim_id, decision, at])
    con.execute(sql_text("link_decisions.sql"))
    in_force = dict(con.execute("SELECT kim_id, decision FROM link_decision_in_force").fetchall())
    assert in_force == {"b-open": "accept_kim", "c-kim": "accept_kim", "legacy": "reject"}
