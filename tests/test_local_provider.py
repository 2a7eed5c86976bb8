"""LocalDirProvider: a real provider over pre-downloaded dumps (root/<tt>/<lang>/<file_id>.<ext>)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from cinesub.records import Candidate
from cinesub.sample import generate
from extractors.providers.errors import ProviderError
from extractors.providers.local_dir import LocalDirProvider

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
    with pytest.raises(ProviderError) as e:
        p.search("tt0111161", "en")
    assert e.value.reason_code == "bad_sidecar" and "7.json" in e.value.detail
    _put(tmp_path, "tt0111161", "en", "7.json", "[1, 2]")
    with pytest.raises(ProviderError) as e:
        p.search("tt0111161", "en")
    assert e.value.reason_code == "bad_sidecar"
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
