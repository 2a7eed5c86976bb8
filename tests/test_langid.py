"""Language identification helper: script pre-checks, seeded langdetect, chunking, real payloads."""

from __future__ import annotations

import json

import pytest

from extractors import langid
from extractors.decode import decode


def test_persian_letters_decide_persian_on_a_short_line():
    g = langid.identify("چرا اینجا هستی؟ پدرم گفت نگران نباش", is_payload=True)
    assert g.language == "fa" and g.method == "script"


def test_arabic_on_a_short_line():
    g = langid.identify("لا أعرف ماذا أقول لك يا صديقي، هذه مشكلة كبيرة جداً", is_payload=True)
    assert g.language == "ar"


def test_vietnamese_diacritics_decide_on_two_lines():
    g = langid.identify("Tôi không biết.\nĐược rồi.", is_payload=True)
    assert g.language == "vi" and g.method == "script"


def test_romanian_letters():
    assert langid.identify("Îmi pare rău, trebuie să plecăm acum.", is_payload=True).language == "ro"
    assert langid.identify("Şi ţara, şi oraşul.", is_payload=True).language == "ro"  # cedilla forms too


def test_script_counts():
    c = langid.script_counts("abc ش پ ی é ț ệ 123 _")
    assert (c.arabic, c.persian, c.latin, c.romanian_specific, c.vietnamese_specific) == (3, 2, 6, 1, 1)
    assert c.letters == 9


def test_payload_text_drops_indices_timestamps_and_tags():
    text = "12\r\n00:00:01,000 --> 00:00:02,000\r\n<i>Hello</i> {\\an8}there\r\n"
    assert langid.payload_text(text) == "Hello there"


def test_langdetect_is_seeded_and_reproducible():
    text = "Saya tidak tahu apa yang kamu bicarakan, tapi kita harus pergi sekarang juga."
    a = [langid.detect(text, seed=3) for _ in range(3)]
    assert all(x == a[0] for x in a)
    assert a[0].language == "id"


def test_chunked_vote_on_long_text():
    en = "I do not know what you are talking about, but we have to leave right now. " * 6
    g = langid.detect(en * 3)
    assert g.language == "en" and g.confidence > 0.9 and g.method == "langdetect"


def test_too_short_is_undecided():
    assert langid.identify("ok", is_payload=True).language is None


@pytest.mark.realdata
def test_real_files_identified(realdata_dir):
    index = json.loads((realdata_dir / "srt" / "INDEX.json").read_text())
    for row in index:
        lang = row["lang"] if row["lang"] != "other_lang" else "fr"
        text = decode((realdata_dir / "srt" / row["file"]).read_bytes(), lang).text
        assert langid.identify(text).language == lang, row["file"]
