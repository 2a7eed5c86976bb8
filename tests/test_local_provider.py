"""LocalDirProvider: a real provider over pre-downloaded dumps (root/<tt>/<lang>/<file_id>.<ext>)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from cinesub.records import Candidate
from cinesub.sample import generate
from extractors.providers.errors import ProviderError
from extractors.providers.local_dir import REFUSAL_CODES, LocalDirProvider

SRT = b"1\r\n00:00:01,000 --> 00:00:02,000\r\nHello.\r\n\r\n"


def _put(root: Path, tt: str, lang: str, name: str, data: bytes | str) -> Path:
    p = root / tt / lang / name
    p.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        p.write_text(data, encoding="utf-8")
    else:
        p.write_bytes(data)
    return p


def test_search_reads_sidecars_and_orders_by_download_count(tmp_path):
    attrs = {"download_count": 120, "uploader": {"name": "kitty"}, "release": "X.2019.1080p", "fps": 23.976,
             "hearing_impaired": True, "machine_translated": True, "ai_translated": False,
             "upload_date": "2020-01-02T03:04:05Z", "feature_details": {"imdb_id": 770828}}
    _put(tmp_path, "tt0770828", "en", "111.srt", SRT)
    _put(tmp_path, "tt0770828", "en", "111.json", json.dumps(attrs))
    _put(tmp_path, "tt0770828", "en", "222.srt", SRT + b"2\r\n")
    _put(tmp_path, "tt0770828", "en", "222.json", json.dumps({"id": "9", "type": "subtitle", "attributes": {"download_count": 999}}))
    _put(tmp_path, "tt0770828", "en", "333.sub", b"{1}{25}raw microdvd")  # no sidecar
    _put(tmp_path, "tt0770828", "en", "notes.md", "ignored")
    _put(tmp_path, "tt0770828", "en", ".hidden.srt", SRT)
    found = LocalDirProvider(tmp_path).search("tt0770828", "en")
    assert [(c.file_id, c.download_count) for c in found] == [("222", 999), ("111", 120), ("333", 0)]
    c = found[1]
    assert (c.provider, c.imdb_id, c.language) == ("local", "tt0770828", "en")
    assert (c.uploader, c.release, c.fps, c.upload_date) == ("kitty", "X.2019.1080p", 23.976, "2020-01-02T03:04:05Z")
    assert c.hearing_impaired and c.machine_translated and not c.ai_translated
    assert c.feature_imdb_id == "tt0770828"
    assert c.url.startswith("file://") and c.url.endswith("/tt0770828/en/111.srt")
    assert found[2].uploader is None and found[2].feature_imdb_id is None


def test_missing_directories_mean_no_candidates(tmp_path):
    p = LocalDirProvider(tmp_path / "nowhere")
    assert p.search("tt0111161", "en") == []
    _put(tmp_path, "tt0111161", "en", "1.srt", SRT)
    assert LocalDirProvider(tmp_path).search("tt0111161", "fa") == []


def test_download_returns_the_bytes_untouched(tmp_path):
    raw = b"\xff\xfe" + "1\r\n00:00:01,000 --> 00:00:02,000\r\nSalut\r\n".encode("utf-16-le")
    _put(tmp_path, "tt0111161", "ro", "4242.srt", raw)
    p = LocalDirProvider(tmp_path)
    (cand,) = p.search("tt0111161", "ro")
    assert p.download(cand) == raw
    bare = Candidate(imdb_id="tt0111161", language="ro", provider="local", file_id="4242")
    assert p.download(bare) == raw  # found by file id without the url


def test_errors_carry_reason_codes(tmp_path):
    p = LocalDirProvider(tmp_path)
    with pytest.raises(ProviderError) as e:
        p.search("tt12345", "en")
    assert e.value.reason_code == "invalid_query"
    with pytest.raises(ProviderError) as e:
        p.search("tt0111161", "../../etc")
    assert e.value.reason_code == "invalid_query"
    _put(tmp_path, "tt0111161", "en", "7.srt", SRT)
    _put(tmp_path, "tt0111161", "en", "7.json", "{not json")
    listing = p.scan("tt0111161", "en")  # a bad sidecar refuses its file, the search goes on
    assert listing.candidates == [] and p.search("tt0111161", "en") == []
    (r,) = listing.refused
    assert (r.file_id, r.reason_code) == ("7", "bad_sidecar") and "7.json" in r.detail
    _put(tmp_path, "tt0111161", "en", "7.json", "[1, 2]")
    (r,) = p.scan("tt0111161", "en").refused
    assert r.reason_code == "bad_sidecar" and "expected a JSON object" in r.detail
    gone = Candidate(imdb_id="tt0111161", language="en", provider="local", file_id="8")
    with pytest.raises(ProviderError) as e:
        p.download(gone)
    assert e.value.reason_code == "not_found"
    evil = Candidate(imdb_id="tt0111161", language="en", provider="local", file_id="../7")
    with pytest.raises(ProviderError) as e:
        p.download(evil)
    assert e.value.reason_code == "invalid_query"
    # a path that exists but cannot be read as a file
    d = tmp_path / "tt0111161" / "en" / "9.srt"
    d.mkdir()
    blocked = Candidate(imdb_id="tt0111161", language="en", provider="local", file_id="9", url=d.resolve().as_uri())
    with pytest.raises(ProviderError) as e:
        p.download(blocked)
    assert e.value.reason_code == "unreadable"
    assert str(e.value).startswith("unreadable: ")


def test_serves_the_sample_world_exactly(tmp_path):
    manifest = generate(tmp_path / "w", seed=5, n_films=17)
    p = LocalDirProvider(tmp_path / "w" / "subtitles")
    slots: dict[tuple[str, str], list[dict]] = {}
    for c in manifest["candidates"]:
        slots.setdefault((c["imdb_id"], c["language"]), []).append(c)
    assert slots
    for (tt, lang), cands in slots.items():
        found = p.search(tt, lang)
        want = sorted(cands, key=lambda c: c["rank"])
        assert [c.file_id for c in found] == [c["file_id"] for c in want]
        assert [c.download_count for c in found] == [c["download_count"] for c in want]
        assert [c.machine_translated for c in found] == [c["machine_translated"] for c in want]
        for got, c in zip(found[:1], want[:1]):
            assert hashlib.sha256(p.download(got)).hexdigest() == c["sha256"]


# ------------------------------------------------------------------------------------------------
# issue 14 point 6: one bad entry is a recorded refusal of that entry only
# ------------------------------------------------------------------------------------------------


def _no_hang(seconds: int = 20):
    """Fail (instead of hanging the suite) if something opens a FIFO for reading."""
    import signal

    def boom(*_):
        raise AssertionError("blocked: a FIFO was opened")

    signal.signal(signal.SIGALRM, boom)
    signal.alarm(seconds)
    return lambda: signal.alarm(0)


def test_one_garbage_sidecar_refuses_only_its_own_file(tmp_path):
    _put(tmp_path, "tt0111161", "en", "1.srt", SRT)
    _put(tmp_path, "tt0111161", "en", "1.json", json.dumps({"download_count": 50}))
    _put(tmp_path, "tt0111161", "en", "2.srt", SRT)
    _put(tmp_path, "tt0111161", "en", "2.json", json.dumps({"download_count": 20}))
    _put(tmp_path, "tt0111161", "en", "3.srt", SRT)
    _put(tmp_path, "tt0111161", "en", "3.json", b"\x89PNG\r\n\x1a\n garbage")
    p = LocalDirProvider(tmp_path)
    assert [(c.file_id, c.download_count) for c in p.search("tt0111161", "en")] == [("1", 50), ("2", 20)]
    (r,) = p.scan("tt0111161", "en").refused
    assert (r.file_id, r.reason_code) == ("3", "bad_sidecar") and "3.json" in r.detail


@pytest.mark.parametrize("sidecar, why", [
    ('{"download_count": Infinity}', "Infinity is not JSON"),
    ('{"download_count": NaN}', "NaN is not JSON"),
    ('{"download_count": 1e300}', "download_count"),          # a BIGINT column: would crash the insert
    ('{"download_count": -4}', "download_count"),
    ('{"download_count": "many"}', "download_count"),
    ('{"fps": "fast"}', "fps"),
    ('{"fps": 1e999}', "fps"),                                # json reads it as inf
    ('{"release": ["a", "b"]}', "release"),
    ('{"hearing_impaired": "false"}', "hearing_impaired"),    # would have been truthy
    ('{"uploader": 7}', "uploader"),
    ('{"feature_details": {"imdb_id": "the matrix"}}', "feature_details.imdb_id"),
    ('{"feature_details": []}', "feature_details"),
    ("[" * 200_000, "RecursionError"),
    ('"just a string"', "expected a JSON object"),
    (b"\xff\xfe{\x00}\x00", "not JSON"),
])
def test_sidecar_of_the_wrong_shape_refuses_its_file(tmp_path, sidecar, why):
    _put(tmp_path, "tt0111161", "ro", "1.srt", SRT)
    _put(tmp_path, "tt0111161", "ro", "2.srt", SRT)
    _put(tmp_path, "tt0111161", "ro", "2.json", sidecar)
    listing = LocalDirProvider(tmp_path).scan("tt0111161", "ro")
    assert [c.file_id for c in listing.candidates] == ["1"]
    (r,) = listing.refused
    assert (r.file_id, r.reason_code) == ("2", "bad_sidecar") and why in r.detail, r


def test_sidecar_lenient_where_dumps_differ(tmp_path):
    side = {"download_count": "12", "fps": 25, "hearing_impaired": 1, "machine_translated": None,
            "uploader": "someone", "feature_details": {"imdb_id": "111161"}}
    _put(tmp_path, "tt0111161", "en", "1.srt", SRT)
    _put(tmp_path, "tt0111161", "en", "1.JSON", "\ufeff" + json.dumps(side))  # BOM, upper-case suffix
    (c,) = LocalDirProvider(tmp_path).search("tt0111161", "en")
    assert (c.download_count, c.fps, c.hearing_impaired, c.machine_translated, c.uploader, c.feature_imdb_id) == (
        12, 25.0, True, False, "someone", "tt0111161")


def test_every_unusable_entry_is_refused_with_a_reason_and_nothing_blocks(tmp_path):
    d = tmp_path / "tt0111161" / "en"
    _put(tmp_path, "tt0111161", "en", "1.srt", SRT)                      # the good one
    os.mkfifo(d / "fifo.srt")                                            # never opened
    os.mkfifo(d / "4.json")                                              # a FIFO sidecar: refuses 4.srt
    _put(tmp_path, "tt0111161", "en", "4.srt", SRT)
    (d / "gone.srt").symlink_to(d / "nowhere.srt")                      # dangling
    (d / "loop.srt").symlink_to(d / "loop.srt")                         # ELOOP: an OS error
    _put(tmp_path, "tt0111161", "en", "real.srt", SRT)
    (d / "alias.srt").symlink_to(d / "real.srt")                        # a link to a file is served
    (d / "folder.srt").mkdir()                                           # a folder where a file belongs
    (d / "bare").mkdir()
    (d / os.fsdecode(b"caf\xe9.srt")).write_bytes(SRT)                   # name not UTF-8
    _put(tmp_path, "tt0111161", "en", "lonely.json", "{}")               # sidecar without a file
    _put(tmp_path, "tt0111161", "en", "notes.md", "text")                # not a subtitle format
    _put(tmp_path, "tt0111161", "en", "5.sub", b"{1}{2}x")               # same id as 5.srt
    _put(tmp_path, "tt0111161", "en", "5.srt", SRT)
    _put(tmp_path, "tt0111161", "en", "6.json", "{}")
    (d / "6.srt").symlink_to(tmp_path / "missing-target")              # a dangling file: its sidecar is no orphan
    _put(tmp_path, "tt0111161", "en", "7.srt", SRT * 100)                # above the size limit below
    _put(tmp_path, "tt0111161", "en", "8.srt", SRT)
    (d / "8.json").symlink_to(tmp_path / "no-sidecar")                 # a dangling sidecar
    _put(tmp_path, "tt0111161", "en", ".DS_Store", b"\0\0")              # hidden: passed over
    done = _no_hang()
    try:
        listing = LocalDirProvider(tmp_path, max_file_bytes=len(SRT) * 10).scan("tt0111161", "en")
    finally:
        done()
    assert sorted(c.file_id for c in listing.candidates) == ["1", "5", "alias", "real"]
    five = next(c for c in listing.candidates if c.file_id == "5")
    assert five.url.endswith("/5.srt")
    got = {r.file_id: r.reason_code for r in listing.refused}
    assert got == {
        "fifo": "not_a_file", "4": "bad_sidecar", "gone": "dangling_link", "loop": "unreadable",
        "folder": "not_a_file", "bare": "not_a_file", "caf\\xe9": "bad_file_name", "lonely": "orphan_sidecar",
        "notes": "unsupported_extension", "5": "duplicate_id", "6": "dangling_link", "7": "too_large",
        "8": "bad_sidecar",
    }, listing.refused
    assert len(listing.refused) == len(got)
    assert set(got.values()) <= set(REFUSAL_CODES)
    for r in listing.refused:  # every detail is plain text (the state DB stores it)
        r.detail.encode("utf-8")
        r.file_id.encode("utf-8")
    assert "5.sub" in next(r.detail for r in listing.refused if r.file_id == "5")


def test_folder_that_is_a_file_refuses_the_slot(tmp_path):
    _put(tmp_path, "tt0111161", "en", "1.srt", SRT)
    (tmp_path / "tt0111161" / "fa").write_text("not a folder")
    (tmp_path / "tt0068646").write_text("not a folder either")
    p = LocalDirProvider(tmp_path)
    (r,) = p.scan("tt0111161", "fa").refused
    assert (r.file_id, r.reason_code) == ("-", "not_a_directory") and r.detail.endswith("fa: file, not a folder")
    (r,) = p.scan("tt0068646", "en").refused
    assert (r.file_id, r.reason_code) == ("-", "not_a_directory")
    assert p.search("tt0111161", "fa") == [] and [c.file_id for c in p.search("tt0111161", "en")] == ["1"]


def test_download_never_blocks_on_a_fifo_and_caps_the_size(tmp_path):
    d = tmp_path / "tt0111161" / "en"
    d.mkdir(parents=True)
    os.mkfifo(d / "9.srt")
    cand = Candidate(imdb_id="tt0111161", language="en", provider="local", file_id="9",
                     url=(d / "9.srt").resolve().as_uri())
    done = _no_hang()
    try:
        with pytest.raises(ProviderError) as e:
            LocalDirProvider(tmp_path).download(cand)
    finally:
        done()
    assert e.value.reason_code == "unreadable" and "not a regular file" in e.value.detail
    (d / "9.srt").unlink()
    (d / "9.srt").write_bytes(SRT * 10)
    with pytest.raises(ProviderError) as e:
        LocalDirProvider(tmp_path, max_file_bytes=len(SRT)).download(cand)
    assert e.value.reason_code == "too_large"
    assert LocalDirProvider(tmp_path).download(cand) == SRT * 10


@pytest.mark.realdata
def test_real_opensubtitles_search_items_are_valid_sidecars(tmp_path, realdata_dir):
    api = realdata_dir / "opensubtitles_api" / "subliminal"
    items = [it for f in sorted(api.glob("*__api_v1_subtitles__200.json"))
             for it in json.loads(f.read_text(encoding="utf-8")).get("data", [])]
    assert len(items) > 20
    for k, item in enumerate(items):
        _put(tmp_path, "tt0770828", "en", f"{k}.srt", SRT)
        _put(tmp_path, "tt0770828", "en", f"{k}.json", json.dumps(item if k % 2 else item["attributes"]))
    listing = LocalDirProvider(tmp_path).scan("tt0770828", "en")
    # a real multi-file item (CD1/CD2, 6% of real items) is a refusal of its own, never a candidate
    multi = {str(k) for k, it in enumerate(items)
             if it["attributes"].get("nb_cd", 1) > 1 or len(it["attributes"].get("files") or []) > 1}
    assert multi, "the recorded searches hold multi-file items"
    assert {(r.file_id, r.reason_code) for r in listing.refused} == {(k, "multi_part") for k in multi}
    assert len(listing.candidates) == len(items) - len(multi)
    by_id = {c.file_id: c for c in listing.candidates}
    for k, item in enumerate(items):
        if str(k) in multi:
            continue
        a = item["attributes"]
        c = by_id[str(k)]
        assert (c.download_count, c.release, c.uploader) == (a["download_count"], a["release"], a["uploader"]["name"])
        assert c.feature_imdb_id == f"tt{a['feature_details']['imdb_id']:07d}"


def test_a_part_of_a_multi_file_upload_is_refused_never_a_whole_film(tmp_path):
    # a dump of an OpenSubtitles item with two files (CD1/CD2): its sidecar says so (nb_cd, files)
    _put(tmp_path, "tt0058150", "en", "100.srt", SRT)
    _put(tmp_path, "tt0058150", "en", "100.json", json.dumps({"download_count": 50, "nb_cd": 2}))
    _put(tmp_path, "tt0058150", "en", "101.srt", SRT)
    _put(tmp_path, "tt0058150", "en", "101.json", json.dumps({"attributes": {"download_count": 40, "files": [
        {"file_id": 101, "cd_number": 1, "file_name": "x.cd1"}, {"file_id": 102, "cd_number": 2, "file_name": "x.cd2"}]}}))
    _put(tmp_path, "tt0058150", "en", "200.srt", SRT)
    _put(tmp_path, "tt0058150", "en", "200.json", json.dumps({"download_count": 10, "nb_cd": 1}))
    listing = LocalDirProvider(tmp_path).scan("tt0058150", "en")
    assert [c.file_id for c in listing.candidates] == ["200"]
    assert sorted((r.file_id, r.reason_code) for r in listing.refused) == [("100", "multi_part"), ("101", "multi_part")]
    assert "multi_part" in REFUSAL_CODES
