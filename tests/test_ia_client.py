"""Internet Archive client (extractors/ia.py): the real ``internetarchive`` package against the
loopback fixture (fixtures/ia_server.py) serving the synthetic Variety and CCE worlds — search,
metadata API, download, content-addressed cache, faults retried then recorded, page texts from
the hOCR page index (never a form-feed split), one jp2 member per page, page images from a jp2
zip and from a PDF through pdf2image; real-capture checks of the derivative names and
``_page_numbers.json``."""

from __future__ import annotations

import hashlib
import io
import json

import pytest

from cinesub.rawstore import RawStore
from cinesub.sample.cce import generate_cce_world
from cinesub.sample.variety import generate_variety_world
from extractors.ia import (
    CCE_QUERY,
    CCE_THIRD_SERIES_QUERY,
    IAClient,
    fetch_file,
    ia_retry_policy,
    list_files,
    make_session,
    page_images_from_pdf,
    search_items,
    variety_query,
)
from extractors.providers.errors import ProviderError
from fixtures.ia_server import IAFixture, matches

VARIETY_1934 = "variety114-1934-03"


@pytest.fixture(scope="module")
def worlds(tmp_path_factory):
    root = tmp_path_factory.mktemp("pdworlds")
    vm = generate_variety_world(root / "variety", seed=1934)
    cm = generate_cce_world(root / "cce", seed=1934)
    return root, vm, cm


@pytest.fixture()
def server(worlds):
    root, _, _ = worlds
    with IAFixture(root / "variety", root / "cce") as srv:
        yield srv


def _client(srv, tmp_path, **kw):
    kw.setdefault("retry", ia_retry_policy(max_attempts=3, backoff_base_s=0.0, backoff_max_s=0.0))
    return IAClient(make_session(srv.host), RawStore(tmp_path / "raw"), **kw)


def test_session_points_the_package_at_the_fixture(server, tmp_path):
    s = make_session(server.host)
    assert s.host == server.host and s.protocol == "http:"
    item = _client(server, tmp_path).item(VARIETY_1934)
    assert item.get_file(f"{VARIETY_1934}_djvu.txt").url.startswith(f"http://{server.host}/download/")
    assert make_session().host == "archive.org" and make_session().protocol == "https:"


def test_search_variety_by_date_range_and_cce_by_title(server, tmp_path, worlds):
    c = _client(server, tmp_path)
    assert c.search_items(variety_query("1934-01-01", "1934-12-31")) == [VARIETY_1934]
    assert c.search_items(variety_query("1926-01-01", "1926-12-31")) == ["variety83-1926-06"]
    assert c.search_items(variety_query("1940-01-01", "1940-12-31")) == []
    cce = c.search_items(CCE_QUERY)
    assert len(cce) == len(worlds[2]["volumes"]) == 8
    third = c.search_items(CCE_THIRD_SERIES_QUERY)
    assert third and set(third) < set(cce) and not any(i.startswith("motionpict") for i in third)
    films = c.search_items("collection:feature_films AND sound:sound")
    assert "GoneWithTheTempest1934" in films and "TheDesertSheikh1926" not in films
    # the package's default path is the scrape API (POST), with its total_only count request
    assert {e.path for e in server.log} == {"/services/search/v1/scrape"}
    assert all(e.method == "POST" for e in server.log)
    # the function form
    assert search_items(variety_query("1926-01-01", "1926-12-31"), session=make_session(server.host)) == \
        ["variety83-1926-06"]


def test_advancedsearch_path_and_query_subset(server):
    s = make_session(server.host)
    res = list(s.search_items("identifier:variety*", fields=["identifier", "year"], params={"rows": 10, "page": 1}))
    assert sorted(r["identifier"] for r in res) == ["variety114-1934-03", "variety83-1926-06"]
    assert {r["year"] for r in res} == {"1926", "1934"}
    assert server.log[-1].path == "/advancedsearch.php"
    meta = {"title": "Variety (March 1934)", "collection": ["mediahistory"], "date": "1934-03-07"}
    assert matches("collection:mediahistory AND title:(variety)", meta)
    assert not matches("collection:mediahistory AND NOT title:(variety)", meta)
    assert matches("title:(variety) OR title:(billboard)", meta)
    assert not matches("date:[1935-01-01 TO 1935-12-31]", meta)
    assert not matches('title:("march variety")', meta)


def test_list_files_through_the_metadata_api(server, tmp_path, worlds):
    root = worlds[0]
    files = {f["name"]: f for f in list_files(VARIETY_1934, session=make_session(server.host))}
    assert set(files) == {f"{VARIETY_1934}{s}" for s in ("_djvu.txt", "_jp2.zip", "_hocr_searchtext.txt.gz",
                                                          "_hocr_pageindex.json.gz", "_page_numbers.json",
                                                          "_scandata.xml")}
    data = (root / "variety" / "ia" / VARIETY_1934 / f"{VARIETY_1934}_djvu.txt").read_bytes()
    f = files[f"{VARIETY_1934}_djvu.txt"]
    assert f["md5"] == hashlib.md5(data).hexdigest() and f["size"] == str(len(data)) and f["format"] == "DjVuTXT"
    c = _client(server, tmp_path)
    assert c.metadata(VARIETY_1934)["collection"][0] == "mediahistory"
    with pytest.raises(ProviderError) as ei:
        c.list_files("no-such-item")
    assert ei.value.reason_code == "not_found"


def test_fetch_file_is_cached_content_addressed(server, tmp_path, worlds):
    name = f"{VARIETY_1934}_djvu.txt"
    store = RawStore(tmp_path / "raw")
    digest, data = fetch_file(VARIETY_1934, name, store, session=make_session(server.host))
    assert digest == hashlib.sha256(data).hexdigest() and store.get(digest) == data
    assert server.count("download") == 1
    n = len(server.log)
    again = IAClient(make_session(server.host), store)  # a new client (another run): no request at all
    assert again.fetch_file(VARIETY_1934, name) == (digest, data)
    assert len(server.log) == n and again.requests == 0


def test_transient_faults_are_retried_and_recorded(server, tmp_path):
    c = _client(server, tmp_path)
    name = f"{VARIETY_1934}_jp2.zip"
    server.script(f"/download/{VARIETY_1934}/{name}", "503", 1)
    server.script(f"/download/{VARIETY_1934}/{name}", "truncated", 1)
    digest, data = c.fetch_file(VARIETY_1934, name)
    assert hashlib.sha256(data).hexdigest() == digest
    assert [(e["op"], e["attempt"], e["reason"], e["final"]) for e in c.events] == [
        ("download", 1, "server_error", False), ("download", 2, "truncated", False)]
    assert [e.status for e in server.log if e.path.startswith("/download/")] == [503, 200, 200]
    server.script("/metadata/variety83", "429", 1)
    assert c.list_files("variety83-1926-06")
    assert c.events[-1]["reason"] == "rate_limited"


def test_persistent_fault_gives_a_typed_error_after_bounded_attempts(server, tmp_path):
    c = _client(server, tmp_path)
    server.script("/download/variety83-1926-06/", "503", 10)
    with pytest.raises(ProviderError) as ei:
        c.fetch_file("variety83-1926-06", "variety83-1926-06_djvu.txt")
    assert ei.value.reason_code == "server_error" and ei.value.retryable
    tries = [e for e in c.events if e["op"] == "download"]
    assert len(tries) == 3 and tries[-1]["final"] and not tries[0]["final"]
    assert c.cached("variety83-1926-06", "variety83-1926-06_djvu.txt") is None  # nothing half-stored


def test_not_found_is_not_retried(server, tmp_path):
    c = _client(server, tmp_path)
    c.item("variety83-1926-06")
    server.script("/download/variety83-1926-06/", "404", 5)
    with pytest.raises(ProviderError) as ei:
        c.fetch_file("variety83-1926-06", "variety83-1926-06_djvu.txt")
    assert ei.value.reason_code == "not_found" and not ei.value.retryable
    assert len([e for e in c.events if e["op"] == "download"]) == 1


def test_page_texts_from_the_hocr_page_index(server, tmp_path, worlds):
    vm = worlds[1]
    c = _client(server, tmp_path)
    pt = c.page_texts(VARIETY_1934)
    item = next(i for i in vm["items"] if i["identifier"] == VARIETY_1934)
    assert pt.source == "hocr" and len(pt.texts) == len(item["pages"]) == 13
    assert pt.alignment.source == "scandata" and pt.alignment.reason is None
    assert pt.alignment.leaves == tuple(range(13))
    assert "Media History Digital Library" in pt.texts[0]  # leaf 0: the colophon
    for n in (n for n in vm["ocr_noise"] if n["item_id"] == VARIETY_1934):
        assert n["noisy"] in pt.texts[n["page"]]
    djvu = c.fetch_file(VARIETY_1934, f"{VARIETY_1934}_djvu.txt")[1]
    assert b"\f" not in djvu  # as real _djvu.txt: no page marker


def test_an_item_with_only_djvu_txt_is_no_page_index(worlds, tmp_path):
    import shutil

    root = worlds[0]
    src = root / "variety" / "ia" / VARIETY_1934
    dst = tmp_path / "w" / "ia" / VARIETY_1934
    dst.mkdir(parents=True)
    for name in ("_item.json", f"{VARIETY_1934}_djvu.txt", f"{VARIETY_1934}_jp2.zip"):
        shutil.copy(src / name, dst / name)
    with IAFixture(tmp_path / "w") as srv:
        with pytest.raises(ProviderError) as ei:
            _client(srv, tmp_path).page_texts(VARIETY_1934)
    assert ei.value.reason_code == "no_page_index"


def test_one_page_image_is_one_jp2_member(server, tmp_path, worlds):
    vm = worlds[1]
    c = _client(server, tmp_path)
    zip_name = f"{VARIETY_1934}_jp2.zip"
    sha, mime = c.page_image(VARIETY_1934, zip_name, 3, max_b64_bytes=50_000_000)
    item = next(i for i in vm["items"] if i["identifier"] == VARIETY_1934)
    assert mime == "image/png" and sha == item["pages"][3]["png_sha256"]  # same pixels as the world's page
    paths = [e.path for e in server.log if e.path.startswith("/download/")]
    assert paths == [f"/download/{VARIETY_1934}/{zip_name}/{VARIETY_1934}_jp2%2F{VARIETY_1934}_0003.jp2"]
    n = len(server.log)
    assert c.page_image(VARIETY_1934, zip_name, 3, max_b64_bytes=50_000_000)[0] == sha
    assert len(server.log) == n  # served from the raw store
    small, mime = c.page_image(VARIETY_1934, zip_name, 3, max_b64_bytes=36_000)  # the PNG needs 37,624
    from extractors.ia_pages import b64_len

    assert mime == "image/jpeg" and b64_len(len(c.store.get(small))) <= 36_000


def test_item_fingerprint_follows_item_last_updated(server, tmp_path):
    c = _client(server, tmp_path)
    before = c.item_fingerprint(VARIETY_1934)
    assert before == f"{VARIETY_1934}@1700000000"
    server.touch(VARIETY_1934)
    assert _client(server, tmp_path).item_fingerprint(VARIETY_1934) == f"{VARIETY_1934}@1700000001"


def test_page_images_from_ia_jp2_zip_match_the_world_pngs(server, tmp_path, worlds):
    vm = worlds[1]
    c = _client(server, tmp_path)
    imgs = c.page_images(VARIETY_1934)
    item = next(i for i in vm["items"] if i["identifier"] == VARIETY_1934)
    assert [p.page for p in imgs] == list(range(13))
    assert [p.sha256 for p in imgs] == [p["png_sha256"] for p in item["pages"]]
    assert all(c.store.has(p.sha256) for p in imgs)


def _matplotlib_pdf(n_pages: int) -> bytes:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.backends.backend_pdf import PdfPages
    from matplotlib.figure import Figure

    buf = io.BytesIO()
    with PdfPages(buf, metadata={"CreationDate": None}) as pdf:
        for i in range(n_pages):
            fig = Figure(figsize=(4, 3))
            fig.text(0.1, 0.5, f"CATALOG OF COPYRIGHT ENTRIES page {i + 1}")
            pdf.savefig(fig)
    return buf.getvalue()


def test_pdf_pages_through_pdf2image():
    pages = page_images_from_pdf(_matplotlib_pdf(2), dpi=50)
    assert [p.page for p in pages] == [0, 1] and pages[0].source == "pdf:1"
    from PIL import Image

    with Image.open(io.BytesIO(pages[1].png)) as img:
        assert img.size == (200, 150)  # 4x3 inches at 50 dpi
        assert img.getextrema() != ((255, 255), (255, 255), (255, 255))  # text was drawn
    assert pages[0].sha256 != pages[1].sha256


def test_cce_item_pdf_becomes_page_images(server, tmp_path, worlds):
    c = _client(server, tmp_path)
    ident = "motionpict19121939synth"
    assert not any(f["name"].endswith("_jp2.zip") for f in c.list_files(ident))
    imgs = c.page_images(ident, dpi=50)
    texts = c.page_texts(ident).texts
    assert len(imgs) == int(c.metadata(ident)["page-count"]) == len(texts)
    gold = json.loads((worlds[0] / "cce" / "gold" / ident / "0001.json").read_text())
    assert gold["entries"] and "LP4520" in texts[1]


def test_recovers_from_the_shared_fault_plan(worlds, tmp_path):
    """The FaultPlan modes of the other fixtures (5xx, truncated, HTML body, 429 bursts): with six
    bounded attempts every call succeeds, and each injected fault is one recorded attempt."""
    root, vm, _ = worlds
    with IAFixture(root / "variety", root / "cce", faults="server_5xx,truncated,html_body,rate_429") as srv:
        c = IAClient(make_session(srv.host), RawStore(tmp_path / "raw"),
                     retry=ia_retry_policy(max_attempts=6, backoff_base_s=0.0, backoff_max_s=0.0))
        for item in [VARIETY_1934, "variety83-1926-06", "motionpict19121939synth", "catalogofcopyri1961motsynth"]:
            assert c.page_texts(item).texts
        assert c.search_items(variety_query("1926-01-01", "1934-12-31")) == sorted(i["identifier"] for i in vm["items"])
        injected = sum(srv.faults_injected().values())
        assert injected >= 3
        assert len(c.events) == injected and not any(e["final"] for e in c.events)
        assert {e["reason"] for e in c.events} <= {"server_error", "truncated", "provider_body", "rate_limited"}


# -- page-level derivatives: pure readers and real captures ---------------------------------------
def test_hocr_page_index_offsets_are_characters_not_bytes():
    import gzip

    from extractors.ia_pages import hocr_index, hocr_pages

    pages = ["Öffentliche Übersicht — 1934\n", "Москва: «Кино»\n", "", "café ½ price\n"]
    search, index = hocr_index(pages)
    assert index[1][0] == len(pages[0]) < len(pages[0].encode("utf-8"))  # a char offset, not a byte offset
    gz = gzip.compress(search.encode("utf-8"))
    assert hocr_pages(gz, gzip.compress(json.dumps(index).encode())) == pages
    # byte offsets (the known mistake) would cut the Cyrillic page
    raw = search.encode("utf-8")
    assert raw[index[1][0]:index[1][1]].decode("utf-8", errors="replace") != pages[1]
    from extractors.ia_pages import PageIndexError

    with pytest.raises(PageIndexError) as ei:
        hocr_pages(search, [[0, len(search) + 5, 0, 0]])
    assert ei.value.reason == "bad_page_index"


def test_djvu_xml_one_object_per_page():
    from extractors.ia_pages import djvu_xml_document, djvu_xml_pages

    doc = djvu_xml_document("x", ["PARAMOUNT (3,664; 35-99)\nGone & Tempest\n\nsecond para\n", "", "last\n"])
    assert djvu_xml_pages(doc) == ["PARAMOUNT (3,664; 35-99)\nGone & Tempest\n\nsecond para\n", "", "last\n"]


def test_leaf_alignment_from_scandata_and_mismatch():
    from extractors.ia_pages import align_leaves, scandata_access_leaves, scandata_document

    xml = scandata_document([(0, "Color Card", False), (1, "Cover", True), (2, "Normal", True), (3, "Normal", True)])
    leaves = scandata_access_leaves(xml)
    assert leaves == [1, 2, 3]
    ok = align_leaves(3, leaves, "scandata")
    assert ok.leaves == (1, 2, 3) and ok.reason is None
    bad = align_leaves(4, leaves, "scandata")
    assert bad.reason == "leaf_page_mismatch" and bad.leaves == (1, 2, 3, 4)
    assert align_leaves(2, None, "assumed").reason == "no_scan_data"


@pytest.mark.realdata
def test_real_metadata_capture_derivatives_found_through_files(realdata_dir):
    from extractors.ia_pages import derivatives, jp2_member

    meta = json.loads((realdata_dir / "live" / "internet_archive" /
                       "ia_metadata_01ambientairsurvey00onta_2026-09.json").read_text(encoding="utf-8"))
    ident = meta["metadata"]["identifier"]
    names = derivatives(meta["files"], ident)
    for key in ("searchtext", "pageindex", "djvu_xml", "djvu_txt", "page_numbers", "scandata", "jp2_zip"):
        assert key in names, key
        assert not names[key].startswith(ident + "_")  # the derivative stem differs from the identifier
    formats = {f["name"]: f.get("format") for f in meta["files"]}
    assert formats[names["pageindex"]] == "OCR Page Index" and formats[names["searchtext"]] == "OCR Search Text"
    stem = names["jp2_zip"][: -len("_jp2.zip")]
    assert jp2_member(names["jp2_zip"], 7) == f"{stem}_jp2/{stem}_0007.jp2"
    assert str(meta["item_last_updated"]).isdigit()


@pytest.mark.realdata
def test_real_page_numbers_capture_parses(realdata_dir):
    from extractors.ia_pages import align_leaves, page_numbers

    data = (realdata_dir / "live" / "internet_archive" / "ia_page_numbers_31761115522773_trimmed.json").read_bytes()
    pages = page_numbers(data)
    assert len(pages) == 2 and all(isinstance(p["leafNum"], int) and isinstance(p["pageNumber"], str) for p in pages)
    al = align_leaves(2, [p["leafNum"] for p in pages], "page_numbers")
    assert al.reason is None and al.leaves == tuple(p["leafNum"] for p in pages)


@pytest.mark.realdata
def test_real_djvu_txt_capture_has_no_form_feed(realdata_dir):
    text = (realdata_dir / "live" / "internet_archive" / "ia_djvu_txt_real_noff_fixture.txt").read_bytes()
    assert b"\f" not in text  # why no page split is ever guessed from _djvu.txt


def test_a_file_re_derived_under_the_same_name_is_not_read_stale(tmp_path):
    """The stored copy of ``identifier/name`` is keyed by the md5 the metadata API gave; once the
    client holds metadata with another md5, the old copy is not served."""
    from types import SimpleNamespace

    from cinesub.rawstore import RawStore
    from extractors.ia import IAClient

    store = RawStore(tmp_path / "raw")
    client = IAClient(session=None, store=store)
    digest, _ = store.put(b"old text")
    client._write_ref(store, "item1", "item1_djvu.xml", digest, "md5-old")
    assert client.cached("item1", "item1_djvu.xml") == digest
    client._items["item1"] = SimpleNamespace(files=[{"name": "item1_djvu.xml", "md5": "md5-old"}])
    assert client.cached("item1", "item1_djvu.xml", md5=client._known_md5("item1", "item1_djvu.xml")) == digest
    client._items["item1"] = SimpleNamespace(files=[{"name": "item1_djvu.xml", "md5": "md5-new"}])
    assert client.cached("item1", "item1_djvu.xml", md5=client._known_md5("item1", "item1_djvu.xml")) is None
