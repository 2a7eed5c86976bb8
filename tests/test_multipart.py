"""Multi-part uploads (issue 16 point 6): a part is never a film's whole track.

* the real OpenSubtitles multi-file items (../shared/realdata/live/opensubtitles, from the
  subliminal cassettes) replayed from loopback through the real client: every item is one
  candidate of its parts in cd_number order, or refused ``multi_part`` at search time;
* the join rule (validators/multipart.py) on its own;
* the sample world's planted items through the OpenSubtitles emulation: the joinable one is
  downloaded part by part (one quota unit each) and joined with its provenance, the one whose CD2
  restarts its timestamps is refused ``multi_part``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cinesub.records import Candidate
from extractors.http_client import RetryPolicy
from extractors.providers.errors import REASON_CODES, ProviderError
from extractors.providers.opensubtitles import OpenSubtitlesProvider
from extractors.srt import parse
from fixtures import OpenSubtitlesFixture
from fixtures.faults import LoopbackServer, Request, Response
from validators.multipart import NotJoinable, Part, join_parts, name_problem, part_number, parts_of_members, plan_parts

FAST = RetryPolicy(max_attempts=3, backoff_base_s=0.01, backoff_max_s=0.02)
CAPTURES = ("os_2025-02_search_james-bond_page01_multifile_items_only.json",
            "os_2025-02_search_james-bond_page02_multifile_items_only.json")


# --------------------------------------------------------------------------------------------
# the real captures, replayed
# --------------------------------------------------------------------------------------------
class _Replay(LoopbackServer):
    """Serves the captured search pages (page 1 without ``page``, as the real API redirects it)."""

    def __init__(self, pages: list[bytes]):
        super().__init__()
        self.pages = pages
        self.seen: list[str] = []

    def route(self, req: Request):
        return "search", req.path, (), True

    def handle(self, req: Request, kind: str) -> Response:
        self.seen.append(req.raw_query)
        if req.path != "/api/v1/subtitles":
            return Response.json({"message": "not found"}, 404)
        page = int(req.q("page", "1") or 1)
        if page > len(self.pages):
            return Response.json({"total_pages": 31, "total_count": 1502, "per_page": 50, "page": page, "data": []})
        return Response(status=200, body=self.pages[page - 1], content_type="application/json; charset=utf-8")


@pytest.mark.realdata
def test_real_multi_file_items_are_one_candidate_of_ordered_parts_or_refused(realdata_dir):
    folder = realdata_dir / "live" / "opensubtitles"
    raw = [(folder / name).read_bytes() for name in CAPTURES]
    items = {}
    for body in raw:
        for item in json.loads(body)["data"]:
            items[item["id"]] = item["attributes"]
    assert len(items) == 14 and all(len(a["files"]) > 1 for a in items.values())
    with _Replay(raw) as srv:
        p = OpenSubtitlesProvider(api_key="k", base_url=f"{srv.root_url}/api/v1", requests_per_second=1000,
                                  burst=50, retry=FAST, max_pages=2)
        listing = p.scan("tt0058150", "en")
    assert len(srv.seen) == 2 and "page=2" in srv.seen[1]
    every_file = {str(f["file_id"]) for a in items.values() for f in a["files"]}
    got = {c.file_id for c in listing.candidates}
    # no candidate is one part of a multi-file item taken as the film's whole track
    assert not got & every_file
    by_parts = {}
    for sid, a in items.items():
        ordered = "+".join(str(f["file_id"]) for f in sorted(a["files"], key=lambda f: f["cd_number"]))
        by_parts[ordered] = sid
    refused = {r.file_id: r for r in listing.refused}
    assert all(r.reason_code == "multi_part" for r in refused.values())
    # every item is recognised: a candidate of its parts in cd_number order, or refused
    assert len(got) + len(refused) == len(items)
    assert got <= set(by_parts)
    assert {by_parts[c] for c in got} | {sid for sid, a in items.items()
                                         if "+".join(str(f["file_id"]) for f in a["files"]) in refused} == set(items)
    assert "4387106+4387110" in got  # Goldfinger …xvid.cd1 / …cd2
    assert "7300997+7300998" in got  # Die Another Day, both files named alike: ordered by cd_number
    # GoldenEye: three English files and a German one (cd_number, not file_id order: 7303790 is CD2)
    goldeneye = next(r for r in refused.values() if "176613" in r.detail)
    assert "german" in goldeneye.detail and "7303787" in goldeneye.detail
    # Moonraker: four unrelated files in one upload (a trailer, a documentary)
    moonraker = next(r for r in refused.values() if "445653" in r.detail)
    assert "bonus material" in moonraker.detail
    assert [c.download_count for c in listing.candidates] == sorted((c.download_count for c in listing.candidates),
                                                                    reverse=True)


@pytest.mark.realdata
def test_real_part_names_do_not_all_say_cd(realdata_dir):
    """Order by cd_number, never by name (MANIFEST §6): names like "03 Goldfinger 1"."""
    data = json.loads((realdata_dir / "live" / "opensubtitles" / CAPTURES[0]).read_bytes())
    for item in data["data"]:
        a = item["attributes"]
        try:
            parts = plan_parts(a["files"], a.get("nb_cd"), a["language"])
        except NotJoinable:
            continue
        assert [p.number for p in parts] == list(range(1, a["nb_cd"] + 1))
        assert [p.file_id for p in parts] == [str(f["file_id"]) for f in sorted(a["files"], key=lambda f: f["cd_number"])]


# --------------------------------------------------------------------------------------------
# the join rule
# --------------------------------------------------------------------------------------------
EN = ["I never thought I would see you again after all these years.", "Where have you been hiding all this time?",
      "We have to leave the city before the storm arrives tonight.", "Nobody knows what happened to the money.",
      "Tell me the truth, or I will walk out of that door right now.", "The train leaves at seven, so hurry up.",
      "My father used to say that patience is the best weapon.", "Do you really believe he is coming back?"]
DE = ["Ich habe nie gedacht, dass ich dich nach all den Jahren wiedersehe.", "Wo hast du dich die ganze Zeit versteckt?",
      "Wir müssen die Stadt verlassen, bevor heute Nacht der Sturm kommt.", "Niemand weiß, was mit dem Geld passiert ist.",
      "Sag mir die Wahrheit, oder ich gehe sofort durch diese Tür.", "Der Zug fährt um sieben, also beeil dich.",
      "Mein Vater sagte immer, Geduld sei die beste Waffe.", "Glaubst du wirklich, dass er zurückkommt?"]


def _srt(lines: list[str], start_s: int, first_index: int = 1, step_s: int = 4) -> bytes:
    out = []
    for i, text in enumerate(lines * 3):
        a = start_s + i * step_s
        out.append(f"{first_index + i}\r\n00:{a // 60 % 60:02d}:{a % 60:02d},000 --> 00:{a // 60 % 60:02d}:{a % 60:02d},900\r\n"
                   f"{text}\r\n")
        if a // 3600:
            raise AssertionError("keep the test tracks under an hour")
    return "\r\n".join(out).encode("cp1252")


def test_absolute_parts_are_joined_with_provenance_and_unique_indices():
    one, two = _srt(EN, 60), _srt(EN[::-1], 60 + 24 * 4 + 10)  # CD2 starts after CD1 ends, indices restart at 1
    joined = join_parts([(Part(2, "22", "x.cd2"), two), (Part(1, "11", "x.cd1"), one)], "en")  # any order in
    entries = parse(joined.data.decode("utf-8")).entries
    assert len(entries) == 48
    assert [e.index for e in entries] == list(range(1, 49))  # part 2 shifted once, nothing renumbered within
    assert entries[24].content == EN[-1] and entries[23].content == EN[-1]
    p1, p2 = joined.provenance["parts"]
    assert (p1["part"], p1["file_id"], p1["index_shift"], p1["first_position"]) == (1, "11", 0, 0)
    assert (p2["part"], p2["file_id"], p2["index_shift"], p2["first_position"]) == (2, "22", 24, 24)
    assert (p2["first_index"], p2["last_index"], p2["entries"]) == (1, 24, 24)
    assert p2["first_start_ms"] >= p1["last_end_ms"] and p1["encoding"] == p2["encoding"]
    # the original (part, index) of every entry of the joined track
    e = entries[30]
    part = max((p for p in (p1, p2) if p["first_position"] <= 30), key=lambda p: p["first_position"])
    assert (part["part"], e.index - part["index_shift"]) == (2, 7)


def test_a_part_that_continues_the_numbering_is_not_shifted():
    joined = join_parts([(Part(1, "1", None), _srt(EN, 10)), (Part(2, "2", None), _srt(EN, 200, first_index=25))], "en")
    assert joined.provenance["parts"][1]["index_shift"] == 0
    assert [e.index for e in parse(joined.data.decode()).entries] == list(range(1, 49))


@pytest.mark.parametrize("case, needle", [
    ("restart", "timestamps restart"),
    ("overlap", "before part 1 ends"),
    ("language", "reads as de"),
    ("garbage", "does not parse"),
])
def test_parts_whose_offsets_are_not_certain_are_refused(case, needle):
    one = _srt(EN, 600)
    two = {"restart": _srt(EN, 5), "overlap": _srt(EN, 600 + 24 * 4 - 30), "language": _srt(DE, 1000),
           "garbage": b"<html><body>Error 520</body></html>"}[case]
    with pytest.raises(NotJoinable, match=needle):
        join_parts([(Part(1, "1"), one), (Part(2, "2"), two)], "en")


def test_plan_parts_orders_by_cd_number_and_refuses_what_metadata_shows():
    files = [{"file_id": 7, "cd_number": 2, "file_name": "a 2"}, {"file_id": 9, "cd_number": 1, "file_name": "a 1"}]
    assert [(p.number, p.file_id) for p in plan_parts(files, 2, "en")] == [(1, "9"), (2, "7")]
    for bad, nb_cd, needle in [
        ([{"file_id": 1, "cd_number": 1}, {"file_id": 2, "cd_number": 3}], 2, "not 1..2"),
        (files, 3, "nb_cd = 3"),
        ([{"file_id": 1, "cd_number": 1}, {"file_id": 1, "cd_number": 2}], 2, "same file_id"),
        ([{"file_id": 1, "cd_number": 1}, {"cd_number": 2}], 2, "numeric file_id"),
        ([{"file_id": 1, "cd_number": 1, "file_name": "Movie (E).english"},
          {"file_id": 2, "cd_number": 2, "file_name": "Movie (E).german"}], 2, "another language"),
        ([{"file_id": 1, "cd_number": 1, "file_name": "Moonraker (EN)"},
          {"file_id": 2, "cd_number": 2, "file_name": "Moonraker - trailer (EN)"}], 2, "bonus material"),
    ]:
        with pytest.raises(NotJoinable, match=needle):
            plan_parts(bad, nb_cd, "en")
    assert name_problem("James Bond - Licence To Kill CD1 ENG", "en") is None
    assert name_problem("Neither Here nor There per se", "en") is None  # lower-case codes are words
    assert name_problem("Film CD1 GER", "en") == "names another language (ger)"


def test_part_numbers_in_archive_member_names():
    assert [part_number(n) for n in ("a.cd1.srt", "A CD2 ENG.srt", "x.1of2.srt", "Part 2.srt", "Movie.2019.srt")] == \
        [1, 2, 1, 2, None]
    assert parts_of_members(["b.CD2.srt", "a.CD1.srt"]) == [(1, "a.CD1.srt"), (2, "b.CD2.srt")]
    assert parts_of_members(["movie.srt", "movie.HI.srt"]) is None  # two versions, not parts
    with pytest.raises(NotJoinable):
        parts_of_members(["a.cd1.srt", "a.cd1.forced.srt"])
    assert {"multi_part", "ass_only", "quota_insufficient"} <= set(REASON_CODES)


# --------------------------------------------------------------------------------------------
# the sample world's planted items, through the emulation and the real client
# --------------------------------------------------------------------------------------------
def _client(srv: OpenSubtitlesFixture, state: Path) -> OpenSubtitlesProvider:
    return OpenSubtitlesProvider(state_path=state, api_key=srv.api_key, username=srv.username, password=srv.password,
                                 base_url=srv.api_url, requests_per_second=1000, burst=50, retry=FAST)


def test_planted_items_joined_or_refused_part_by_part(world, manifest, tmp_path):
    planted = {x["expected"]: x for x in manifest["multi_part"]}
    assert set(planted) == {"joined", "multi_part"}
    with OpenSubtitlesFixture(world) as srv, _client(srv, tmp_path / "q.json") as p:
        for x in planted.values():
            listing = p.scan(x["imdb_id"], x["language"])
            ids = [c.file_id for c in listing.candidates]
            assert x["file_id"] in ids and not {q["file_id"] for q in x["parts"]} & set(ids)
            others = [c.download_count for c in listing.candidates if "+" not in c.file_id]
            assert others and min(others) > x["download_count"]  # ranked below every regular candidate
        ok = planted["joined"]
        data = p.download(Candidate(imdb_id=ok["imdb_id"], language="en", provider="opensubtitles", file_id=ok["file_id"]))
        entries = parse(data.decode("utf-8")).entries
        assert len(entries) == sum(q["entries"] for q in ok["parts"])
        assert len({e.index for e in entries}) == len(entries)  # CD2's restarting indices shifted once
        prov = p.joins[ok["file_id"]]
        assert [q["file_id"] for q in prov["parts"]] == [q["file_id"] for q in ok["parts"]]
        assert [q["sha256"] for q in prov["parts"]] == [q["sha256"] for q in ok["parts"]]
        assert prov["parts"][1]["file_name"].endswith(".cd2") and prov["parts"][1]["index_shift"] > 0
        bad = planted["multi_part"]
        with pytest.raises(ProviderError) as ei:
            p.download(Candidate(imdb_id=bad["imdb_id"], language="en", provider="opensubtitles", file_id=bad["file_id"]))
        assert ei.value.reason_code == "multi_part" and not ei.value.retryable and "restart" in ei.value.detail
        assert bad["file_id"] not in p.joins
        # every part cost one quota unit
        assert p.part_downloads == 4
        assert {str(k): v for k, v in srv.downloads_granted.items()} == {
            q["file_id"]: 1 for x in planted.values() for q in x["parts"]}
        assert p.quota.requests == 4


def test_a_multi_part_item_is_not_started_without_quota_for_every_part(world, manifest, tmp_path):
    ok = next(x for x in manifest["multi_part"] if x["expected"] == "joined")
    single = next(c for c in manifest["candidates"] if c["imdb_id"] == ok["imdb_id"] and c["language"] == "en")
    with OpenSubtitlesFixture(world, allowed_downloads=2) as srv, _client(srv, tmp_path / "q.json") as p:
        p.download(Candidate(imdb_id=ok["imdb_id"], language="en", provider="opensubtitles", file_id=single["file_id"]))
        assert p.quota.remaining == 1
        with pytest.raises(ProviderError) as ei:
            p.download(Candidate(imdb_id=ok["imdb_id"], language="en", provider="opensubtitles", file_id=ok["file_id"]))
        assert ei.value.reason_code == "quota_insufficient" and ei.value.retryable
        assert sum(srv.downloads_granted.values()) == 1  # no part downloaded
