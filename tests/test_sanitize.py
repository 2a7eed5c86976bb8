"""Sanitization (validators.sanitize): the versioned pattern file and every pattern's examples,
narrative lines that must survive, e-mail redaction, the audit log, never renumbering, the
residual scan, six-language boilerplate, and the real files' credit and advertisement entries."""

from __future__ import annotations

import hashlib
import json
import re

import polars as pl
import pytest
import yaml

from cinesub.records import SANITIZATION_SCHEMA
from cinesub.settings import LANGUAGES
from validators.sanitize import (
    ACTIONS,
    PATTERNS_FILE,
    REASONS,
    REDACTION,
    PatternSet,
    classify,
    load_patterns,
    parse_patterns,
    sanitize,
    with_labels,
)

PATTERNS = load_patterns()


def frame(lines: list[str], start: int = 1) -> pl.DataFrame:
    n = len(lines)
    return pl.DataFrame(
        {
            "index": list(range(start, start + n)),
            "timeframe": ["00:00:01,000 --> 00:00:02,000"] * n,
            "start_ms": [1_000] * n,
            "end_ms": [2_000] * n,
            "content": lines,
        },
        schema={
            "index": pl.Int64,
            "timeframe": pl.String,
            "start_ms": pl.Int64,
            "end_ms": pl.Int64,
            "content": pl.String,
        },
    )


# ---------------------------------------------------------------------------------------------
# the pattern file
# ---------------------------------------------------------------------------------------------
def test_pattern_file_is_versioned_and_well_formed():
    raw = yaml.safe_load(PATTERNS_FILE.read_text(encoding="utf-8"))
    assert re.fullmatch(r"\d{4}\.\d+", str(raw["version"]))
    assert PATTERNS.version == str(raw["version"])
    ids = [p.id for p in PATTERNS.patterns]
    assert len(ids) == len(set(ids)) == len(raw["patterns"])
    for p in PATTERNS.patterns:
        assert p.action in ACTIONS and p.reason in REASONS
        assert p.positive and p.negative, f"{p.id} needs positive and negative examples"
        assert p.description
    assert {p.reason for p in PATTERNS.patterns} == set(REASONS)
    assert [p.id for p in PATTERNS.patterns if p.action == "redact"] == ["email"]


def _example_results(pattern, language):
    examples = list(pattern.positive) + list(pattern.negative)
    entries = frame(examples)
    result = sanitize(entries, language, PATTERNS)
    active = PATTERNS.for_language(language)
    matched = with_labels(classify(entries.select("index", "content"), active), active)["_ids"]
    return examples, result, matched


@pytest.mark.parametrize("pattern_id", [p.id for p in PATTERNS.patterns])
def test_every_pattern_example(pattern_id):
    pattern = PATTERNS.by_id(pattern_id)
    for language in pattern.example_languages():
        examples, result, matched = _example_results(pattern, language)
        assert result.residual == [], (language, result.residual)
        cleaned = result.entries["clean_content"].to_list()
        for i, text in enumerate(examples):
            where = (pattern_id, language, text)
            if i < len(pattern.positive):
                assert pattern_id in matched[i], where
                if pattern.action == "redact":
                    assert cleaned[i] is not None and REDACTION in cleaned[i], where
                    assert not re.search(pattern.regex.replace("(?i)", ""), cleaned[i], re.I), where
                else:
                    assert cleaned[i] is None, where
            else:
                assert cleaned[i] == text, where


def test_invalid_pattern_files_are_rejected():
    good = {"id": "x", "languages": ["all"], "reason": "url", "action": "remove_span", "regex": "x"}
    parse_patterns({"version": "1", "patterns": [good]})
    for bad, message in [
        ({**good, "regex": "(unclosed"}, "invalid regex"),
        ({**good, "reason": "spam"}, "reason"),
        ({**good, "action": "delete"}, "action"),
        ({**good, "languages": ["xx"]}, "languages"),
        ({k: v for k, v in good.items() if k != "regex"}, "missing"),
    ]:
        with pytest.raises(ValueError, match=message):
            parse_patterns({"version": "1", "patterns": [bad]})
    with pytest.raises(ValueError, match="duplicate"):
        parse_patterns({"version": "1", "patterns": [good, good]})
    with pytest.raises(ValueError, match="version"):
        parse_patterns({"patterns": [good]})


# ---------------------------------------------------------------------------------------------
# narrative that must survive, in every language
# ---------------------------------------------------------------------------------------------
NARRATIVE = [
    "Call me at the office.",
    "I saw it on the website.",
    "Go to evil-corp dot com slash confess.",
    "Go to evil-corp dot com slash confess,\nand read what they did to your father.",
    "Open http://evil-corp.com/confess and read it to me.",
    "I'm @ home.",
    "@ home, where else?",
    "Meet me @ the bar at nine.",
    "Contact!",
    "The letter was translated by a monk.",
    "Download the files from the server now!",
    "Follow us!",
    "Subscribe? To what?",
    "Fate.net سايت\nکمکتون ميکنه تا شخص مورد نظرتون رو پيدا کنين",
    "على موقع ويب عام؟ -\nنعم -",
    "هذا شعار هيئة البريد",
    ".سر ترجمه پیدا نشد. نمی‌توان ادامه داد",
    "Kau tidak boleh bertanya apapun tentangku.",
    "Ayahku telah diperintahkan oleh\nistana untuk menyiapkannya.",
    "Începe să scape de sub control,\nDragoste.",
    "- Unde e biletul meu?\nNu, e un e-mail.",
    "Tôi sẽ tìm thông dịch tiếng Anh cho anh,",
    "Chúng giống nhau. Dịch mã.",
]


@pytest.mark.parametrize("language", LANGUAGES)
def test_narrative_lines_survive_unchanged(language):
    result = sanitize(frame(NARRATIVE), language)
    assert result.entries["clean_content"].to_list() == NARRATIVE
    assert result.log.height == 0 and result.residual == []


# ---------------------------------------------------------------------------------------------
# e-mail redaction, audit log, never renumbering
# ---------------------------------------------------------------------------------------------
def test_email_in_narrative_is_redacted_and_logged():
    lines = [
        "Where is she?",
        "Write to me at john.smith@example.com before Friday.",
        "Subtitles by DrBob",
        "She said her address was anna_k@mail.ro, I swear.",
        "amir_t6262@yahoo.com\narianhpk@rocketmail.com",
        "Fine.",
    ]
    entries = frame(lines, start=101)
    result = sanitize(entries, "en")
    assert result.entries["clean_content"].to_list() == [
        "Where is she?",
        f"Write to me at {REDACTION} before Friday.",
        None,
        f"She said her address was {REDACTION}, I swear.",
        None,
        "Fine.",
    ]
    assert result.log.to_dicts() == [
        {"position": 1, "index": 102, "action": "modified", "reasons": "email", "sha256": hashlib.sha256(lines[1].encode()).hexdigest()},
        {"position": 2, "index": 103, "action": "removed", "reasons": "credit", "sha256": hashlib.sha256(lines[2].encode()).hexdigest()},
        {"position": 3, "index": 104, "action": "modified", "reasons": "email", "sha256": hashlib.sha256(lines[3].encode()).hexdigest()},
        {"position": 4, "index": 105, "action": "removed", "reasons": "email", "sha256": hashlib.sha256(lines[4].encode()).hexdigest()},
    ]
    assert (result.n_removed, result.n_modified) == (2, 2)
    assert result.residual == []
    assert result.version == PATTERNS.version


def test_never_renumbers_and_keeps_every_row():
    lines = ["Subtitles by X", "Hello.", "www.example.com", "How are you?", "Synced by Y"]
    entries = frame(lines, start=7).with_columns(pl.Series("index", [7, 9, 9, 12, 40]))
    result = sanitize(entries, "en")
    out = result.entries
    assert out.columns == entries.columns + ["clean_content"]
    assert out.drop("clean_content").equals(entries)
    assert out["clean_content"].to_list() == [None, "Hello.", None, "How are you?", None]
    assert result.log["index"].to_list() == [7, 9, 40]


def test_log_has_the_release_schema_and_never_the_text():
    lines = ["Subtitles by DrBob", "Mail me: a.b@example.org or call.", "Ok."]
    result = sanitize(frame(lines), "en")
    # the release columns, plus the entry's position in the file (the state DB's entries key)
    expected = [f for f in SANITIZATION_SCHEMA.names if f not in ("track_id", "imdb_id", "language")]
    assert result.log.columns == expected + ["position"]
    assert dict(result.log.schema) == {
        "index": pl.Int64, "action": pl.String, "reasons": pl.String, "sha256": pl.String,
        "position": pl.Int64,
    }
    logged = json.dumps(result.log.to_dicts(), ensure_ascii=False)
    assert "DrBob" not in logged and "example.org" not in logged
    assert set(result.log["action"]) <= {"removed", "modified"}
    for reasons in result.log["reasons"]:
        assert reasons and set(reasons.split(",")) <= set(REASONS)
        assert reasons.split(",") == sorted(reasons.split(","))


def test_reasons_collect_every_matched_category():
    result = sanitize(frame(["Subtitles by X\nwww.subs-x.com\n@subsx\ncontact: x@subs-x.com"]), "en")
    assert result.log["reasons"].to_list() == ["contact,credit,email,handle,url"]


def test_residual_scan_reports_what_cleaning_left():
    # markup splits the address in the original text: matching (on the normalized text) finds
    # an e-mail, the redaction (on the original text) cannot reach it -- the scan must say so
    result = sanitize(frame(["Write to anna@mail<i></i>.ro tonight, please."]), "en")
    assert result.entries["clean_content"][0] == "Write to anna@mail<i></i>.ro tonight, please."
    assert result.residual == [(1, "email")]


def test_custom_pattern_set_is_used():
    custom = parse_patterns(
        {
            "version": "test",
            "patterns": [
                {"id": "bananas", "languages": ["en"], "reason": "promotion",
                 "action": "remove_entry", "regex": "(?i)banana"},
            ],
        }
    )
    result = sanitize(frame(["Buy BANANAS now", "Subtitles by X"]), "en", custom)
    assert result.entries["clean_content"].to_list() == [None, "Subtitles by X"]
    assert result.version == "test"
    assert sanitize(frame(["Buy BANANAS now"]), "vi", custom).log.height == 0
    assert isinstance(custom, PatternSet)


def test_empty_track():
    result = sanitize(frame([]), "en")
    assert result.entries.height == 0 and result.log.height == 0 and result.residual == []


# ---------------------------------------------------------------------------------------------
# boilerplate in all six languages, planted in narrative tracks
# ---------------------------------------------------------------------------------------------
PLANTED: dict[str, tuple[list[str], list[str]]] = {
    "en": (
        ["Where were you last night?", "I told you, I was at the office.", "Call me at the office.",
         "My e-mail is kate.w@example.com if you need me.", "I saw it on the website."],
        ["Subtitles by DrBob", "Synced and corrected by VitoSilans\nwww.addic7ed.com",
         "Support us and become VIP member\nto remove all ads from www.OpenSubtitles.org",
         "Downloaded from YTS.MX", "Follow us on Instagram @cinesubs", "Email: subs@example.com"],
    ),
    "ar": (
        ["أين كنت الليلة الماضية؟", "قلت لك، كنت أعمل في المكتب.", "سوف تستلمان رأسها في البريد",
         "راسلني على sami.k@example.com غداً من فضلك."],
        ["ترجمة: أحمد علي", "ترجمة وتعديل\n||الدكتور علي طلال||", "\"leel911\" تعديل التوقيت",
         ": زورونا على صفحة الفيسبوك\nhttps://www.facebook.com/SubsTeam",
         "البريد الإلكتروني: team@example.com", "نتمنى لكم مشاهدة ممتعة"],
    ),
    "fa": (
        ["دیشب کجا بودی؟", "بهت گفتم، توی دفتر کار می‌کردم.", "ترجمه کن",
         "ایمیلش reza.m@example.ir بود، مطمئنم."],
        ["ترجمه و زیرنویس از مرتضی و محمد", "زیرنویس از\nامیر و آرین", "مترجم: کسری",
         "تقدیم به تمامی دوستداران سینما", "WwW.FarsiSubtitle.CoM", "ایمیل: team@example.ir",
         ":ما را در تلگرام دنبال کنید\nT.me/SubTeam", "مرجع دانلود فیلم و سریال"],
    ),
    "id": (
        ["Kamu dari mana saja semalam?", "Kau tidak boleh bertanya apapun tentangku.",
         "Oleh karena itu...", "Kirim ke budi.s@example.id sebelum Jumat."],
        ["Subtitle oleh :\n~ PatrickStar ~", "Diterjemahkan oleh Budi", "Alih bahasa: Sari",
         "Kunjungi kami di www.subindo.id", "sub COBA-COBA kalu suka silakan"],
    ),
    "ro": (
        ["Unde ai fost aseară?", "Ți-am spus, am lucrat până târziu la birou.",
         "Începe să scape de sub control,", "Scrie-mi la ana.p@example.ro diseară."],
        ["Traducerea și adaptarea: Ion Popescu", "Subtitrarea: TeamRO", "Tradus de Ion",
         "www.subs.ro", "Sincronizare de Vasile"],
    ),
    "vi": (
        ["Tối qua anh đã ở đâu?", "Chúng giống nhau. Dịch mã.",
         "Gửi thư cho tôi qua lan.n@example.vn nhé."],
        ["Phụ đề thực hiện bởi World Subtitles VN", "Dịch bởi: Ken",
         "- Biên dịch: Đoàn Duy Tùng, Nhật Bổn",
         "Thưởng thức các bộ phim chất lượng cao tại:\nFB.com/WorldSubtitlesVN",
         "Theo dõi fanpage: fb.com/vsub"],
    ),
}


@pytest.mark.parametrize("language", LANGUAGES)
def test_planted_boilerplate_is_removed_and_narrative_kept(language):
    narrative, boilerplate = PLANTED[language]
    lines = boilerplate[:2] + narrative + boilerplate[2:]
    result = sanitize(frame(lines), language)
    cleaned = result.entries["clean_content"].to_list()
    removed = [line for line, clean in zip(lines, cleaned) if clean is None]
    assert removed == boilerplate
    kept = [clean for clean in cleaned if clean is not None]
    emails = [n for n in narrative if "@" in n]
    assert len(emails) == 1
    assert kept == [n if "@" not in n else re.sub(r"\S+@\S+?\.[a-z]{2,}", REDACTION, n) for n in narrative]
    assert result.log.filter(pl.col("action") == "modified")["reasons"].to_list() == ["email"]
    assert result.residual == []


# ---------------------------------------------------------------------------------------------
# real files: every credit/advertisement entry removed, nothing else
# ---------------------------------------------------------------------------------------------
from _realdata import manifest_codecs, read_track  # noqa: E402


#: indices of the distribution-artifact entries in each real file, found by reading every file
#: (a cue number listed twice is a duplicated cue number in the file, both copies artifacts)
EXPECTED_REMOVED: dict[str, list[int]] = {
    "ar/ar__american_assassin_2017__cp1256_crlf.srt": [1, 2, 1066],
    "ar/ar__american_made_2017__utf8sig_crlf.srt": [1, 1508],
    "ar/ar__birth_of_the_dragon_2016__cp1256.srt": [1],
    "ar/ar__blade_runner_2049_2017__utf8.srt": [1, 1009, 1010],
    "ar/ar__geostorm_2017__cp1256_ass_tags.srt": [1],
    "ar/ar__this_means_war_2012__cp1256_ORIGINAL.srt": [1, 2, 3, 1554, 1555],
    "ar/ar__this_means_war_2012__utf8_CONVERTED_same_sub.srt": [1, 2, 3, 1554, 1555],
    "ar/ar__three_billboards_2017__cp1256_ass_tags.srt": [1, 1326, 1327],
    "en/en__ferdinand_2017__cp1252_sdh.srt": [],
    "en/en__manhunt_2017__utf16le_bom.srt": [],
    "en/en__overdrive_2017__cp1252_euro_sign.srt": [],
    "en/en__the_conjuring_2_2016__cp1252_smart_quotes.srt": [1307],
    "en/en__the_incredible_hulk_2008__cp1252_lf_yify.srt": [],
    "fa/fa__blade_runner_2049_2017__utf8sig_crlf.srt": [1, 3, 4, 5, 810, 1045, 1048],
    "fa/fa__manhunt_2017__utf16le_bom.srt": [1, 23, 24, 628, 1257, 1257],
    "fa/fa__the_adventurers_2017__cp1256_font_tags.srt": [1, 711, 929, 934],
    "fa/fa__the_shape_of_water_2017__utf16le_bom.srt": [1, 18, 1470, 1472],
    "fa/fa__this_means_war_2012__cp1256.srt": [1, 2, 36, 37, 693, 1673, 1674, 1675],
    "fa/fa__three_billboards_2017__cp1256.srt": [1, 2, 3, 1375, 1376, 1377, 1378, 1379],
    "id/id__detective_k_2018__utf8sig_crlf.srt": [1, 551, 978, 1144],
    "id/id__fireworks_2017__utf8sig_crlf.srt": [],
    "id/id__mumon_land_of_stealth_2017__utf8sig_crlf.srt": [1, 5],
    "ro/ro__the_royal_hotel_2023__decoded_utf8_sdh_mt_style.srt": [],
    "ro/ro__tor_browser_animation__decoded_utf8_mixed_cedilla_commabelow.srt": [],
    "vi/vi__blade_runner_2049_2017__utf8sig_crlf.srt": [1, 2, 98, 140, 262, 603, 667, 952, 987, 995],
    "vi/vi__cars_3_2017__utf8_crlf.srt": [],
    "vi/vi__manhunt_2017__utf16le_bom.srt": [],
    "vi/vi__wind_river_2017__utf16le_bom_italics.srt": [],
}
#: lines of INDEX.json's heuristic credit/ad sample that are dialogue, not artifacts
INDEX_SAMPLE_DIALOGUE = {
    ".سر ترجمه پیدا نشد. نمی\u200cتوان ادامه داد",
    ".اون\u200cها همسان هستن. ترجمه کن",
    "Începe să scape de sub control,",
    "Tôi sẽ tìm thông dịch tiếng Anh cho anh,",
    "Hãy kiểm tra ADN của chúng với tinh dịch",
}


@pytest.mark.realdata
def test_real_files_artifacts_removed_exactly(realdata_dir):
    codecs = manifest_codecs(realdata_dir)
    assert set(EXPECTED_REMOVED) == {f for f in codecs if f.split("/")[0] in LANGUAGES}
    for name, expected in EXPECTED_REMOVED.items():
        entries = read_track(realdata_dir / "srt" / name, codecs[name])
        result = sanitize(entries, name.split("/")[0])
        removed = sorted(result.log.filter(pl.col("action") == "removed")["index"].to_list())
        assert removed == expected, name
        assert result.n_modified == 0 and result.residual == [], name
        assert result.entries.height == entries.height
        assert result.entries["index"].to_list() == entries["index"].to_list()


@pytest.mark.realdata
def test_real_files_index_sample_of_credit_and_ad_lines(realdata_dir):
    codecs = manifest_codecs(realdata_dir)
    index = json.loads((realdata_dir / "srt" / "INDEX.json").read_text(encoding="utf-8"))
    checked_artifacts = checked_dialogue = 0
    for record in index:
        language = record["lang"]
        if language not in LANGUAGES or not record["credit_or_ad_lines_sample"]:
            continue
        entries = read_track(realdata_dir / "srt" / record["file"], codecs[record["file"]])
        out = sanitize(entries, language).entries
        for sample in record["credit_or_ad_lines_sample"]:
            hits = out.filter(pl.col("content").str.contains(sample, literal=True))
            assert hits.height >= 1, (record["file"], sample)
            if sample in INDEX_SAMPLE_DIALOGUE:
                assert hits["clean_content"].to_list() == hits["content"].to_list(), sample
                checked_dialogue += 1
            else:
                assert hits["clean_content"].null_count() == hits.height, (record["file"], sample)
                checked_artifacts += 1
    assert checked_artifacts >= 40 and checked_dialogue == len(INDEX_SAMPLE_DIALOGUE)


@pytest.mark.realdata
def test_real_duplicated_cue_number_keeps_its_dialogue(realdata_dir):
    # fa manhunt numbers a team advertisement and the first line of dialogue both "1"
    name = "fa/fa__manhunt_2017__utf16le_bom.srt"
    out = sanitize(read_track(realdata_dir / "srt" / name, manifest_codecs(realdata_dir)[name]), "fa").entries
    ones = out.filter(pl.col("index") == 1)
    assert ones["clean_content"].to_list() == [None, "عصربخیر"]
