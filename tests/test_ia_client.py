"""Internet Archive client (extractors/ia.py): the real ``internetarchive`` package against the
loopback fixture (fixtures/ia_server.py) serving the synthetic Variety and CCE worlds — search,
metadata API, download, content-addressed cache, faults retried then recorded, djvu page split,
page images from a jp2 zip and from a PDF through pdf2image."""

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
    has_page_breaks,
    ia_retry_policy,
    list_files,
    make_session,
    page_images_from_pdf,
    search_items,
    split_djvu_pages,
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
    assert set(files) == {f"{VARIETY_1934}_djvu.txt", f"{VARIETY_1934}_jp2.zip"}
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


def test_djvu_text_split_into_leaves(server, tmp_path, worlds):
    vm = worlds[1]
    c = _client(server, tmp_path)
    pages = c.djvu_pages(VARIETY_1934)
    item = next(i for i in vm["items"] if i["identifier"] == VARIETY_1934)
    assert len(pages) == len(item["pages"]) == 13
    assert "Media History Digital Library" in pages[0]  # leaf 0: the colophon
    noisy = [n for n in vm["ocr_noise"] if n["item_id"] == VARIETY_1934]
    for n in noisy:
        assert n["noisy"] in pages[n["page"]]


def test_split_djvu_pages_pure():
    assert split_djvu_pages("a\n\fb\n\fc\n") == ["a\n", "b\n", "c\n"]
    assert split_djvu_pages("a\n\f\n\fc\n\f") == ["a\n", "", "c\n"]  # an empty leaf stays a leaf
    assert split_djvu_pages("one page only\n") == ["one page only\n"]
    assert not has_page_breaks("one page only\n") and has_page_breaks("a\fb")


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
    assert len(imgs) == int(c.metadata(ident)["page-count"]) == len(c.djvu_pages(ident))
    gold = json.loads((worlds[0] / "cce" / "gold" / ident / "0001.json").read_text())
    assert gold["entries"] and "LP4520" in c.djvu_pages(ident)[1]


def test_recovers_from_the_shared_fault_plan(worlds, tmp_path):
    """The FaultPlan modes of the other fixtures (5xx, truncated, HTML body, 429 bursts): with six
    bounded attempts every call succeeds, and each injected fault is one recorded attempt."""
    root, vm, _ = worlds
    with IAFixture(root / "variety", root / "cce", faults="server_5xx,truncated,html_body,rate_429") as srv:
        c = IAClient(make_session(srv.host), RawStore(tmp_path / "raw"),
                     retry=ia_retry_policy(max_attempts=6, backoff_base_s=0.0, backoff_max_s=0.0))
        for item in [VARIETY_1934, "variety83-1926-06", "motionpict19121939synth", "catalogofcopyri1961motsynth"]:
            assert c.djvu_pages(item)
        assert c.search_items(variety_query("1926-01-01", "1934-12-31")) == sorted(i["identifier"] for i in vm["items"])
        injected = sum(srv.faults_injected().values())
        assert injected >= 3
        assert len(c.events) == injected and not any(e["final"] for e in c.events)
        assert {e["reason"] for e in c.events} <= {"server_error", "truncated", "provider_body", "rate_limited"}
