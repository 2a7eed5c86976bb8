"""Language safety over the English track (SPEC A9): lexicon rules in context, exclusions,
counting semantics, SPEC A11 JSON shape, real subtitle tracks (speed: benchmarks/bench_targets.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl
import pytest

from validators import safety
from validators.safety import CATEGORIES, clean_text, safety_to_json, scan

REPO = Path(__file__).resolve().parent.parent
LEX = safety.load_lexicon()


def _positive(item) -> tuple[str, int]:
    return (item, 1) if isinstance(item, str) else (item["text"], int(item["count"]))


# --------------------------------------------------------------------------------------------
# the lexicon file
# --------------------------------------------------------------------------------------------
def test_lexicon_is_versioned_and_complete():
    assert re.fullmatch(r"\d+\.\d+\.\d+", LEX.version)
    assert safety.lexicon_version() == LEX.version
    by_cat = {cat: [r for r in LEX.rules if r.category == cat] for cat in CATEGORIES}
    assert all(by_cat.values())
    for rule in LEX.rules:
        assert rule.positive, rule.id
        assert rule.negative, rule.id
        assert rule.trigger, rule.id


def test_docs_list_every_rule():
    text = (REPO / "docs" / "language_safety.md").read_text(encoding="utf-8")
    missing = [r.id for r in LEX.rules if f"`{r.id}`" not in text]
    assert missing == []
    assert LEX.version in text


def test_rules_use_no_broad_wildcards():
    for rule in LEX.rules:
        # a censored-word wildcard would need a class of symbols like [*#@!-] inside a word
        assert not re.search(r"\[[^\]]*\\\*[^\]]*\]|\\\*\+|\.\*|\.\+", rule.regex), rule.id


# Every positive and negative line of every rule, scanned inside a small track with markup,
# stage directions and neighbouring entries (the line itself is entry 12).
CASES = [(r.id, r.category, *_positive(p), True) for r in LEX.rules for p in r.positive] + [
    (r.id, r.category, n, 0, False) for r in LEX.rules for n in r.negative]


def _in_context(line: str, wrap: str) -> list[tuple[int, str]]:
    body = {"italic": f"<i>{line}</i>", "label": f"{{\\an8}}MAN: {line}",
            "font": f'<font color="#ffffff">{line}</font>\n[DOOR SLAMS]'}[wrap]
    return [(10, "Good morning, everyone."), (11, "(SIGHS)"), (12, body), (13, "THUNDER RUMBLING")]


@pytest.mark.parametrize("wrap", ["italic", "label", "font"])
@pytest.mark.parametrize("rule_id, category, line, count, positive", CASES,
                         ids=[f"{c[0]}-{'pos' if c[4] else 'neg'}-{i}" for i, c in enumerate(CASES)])
def test_rule_lines_in_context(rule_id, category, line, count, positive, wrap):
    result = scan(_in_context(line, wrap))
    cat = getattr(result, category)
    if positive:
        assert cat.occurrenceCount == count, [(m.rule, m.span) for m in result.matches]
        assert cat.evidenceLineCount == 1
        assert cat.evidenceSubtitleIndices == [12]
        assert rule_id in {m.rule for m in result.matches if m.category == category}
    else:
        assert cat.occurrenceCount == 0, [(m.rule, m.span) for m in result.matches]
        assert cat.evidenceSubtitleIndices == []


# --------------------------------------------------------------------------------------------
# counting semantics
# --------------------------------------------------------------------------------------------
def test_occurrences_versus_evidence_lines():
    track = [
        (7, "Fuck, fuck!"),               # two occurrences, one line
        (3, "What the fuck? Oh my God."),  # strong + religious in one line
        (12, "Nothing to see here."),
        (9, "Shit. Damn it!"),
        (5, "fuckin' hell"),
    ]
    r = scan(track)
    assert (r.strongProfanity.occurrenceCount, r.strongProfanity.evidenceLineCount) == (4, 3)
    assert r.strongProfanity.evidenceSubtitleIndices == [3, 5, 7]
    assert r.religiousProfanityAndExclamation.evidenceSubtitleIndices == [3]
    assert r.crudeBodilyLanguage.evidenceSubtitleIndices == [9]
    assert r.mildObscenity.evidenceSubtitleIndices == [9]
    assert [(m.index, m.category, m.span, m.rule) for m in r.matches] == [
        (3, "strongProfanity", "fuck", "sp_f_word"),
        (3, "religiousProfanityAndExclamation", "Oh my God", "rp_oh_my_god"),
        (5, "strongProfanity", "fuckin'", "sp_f_word"),
        (7, "strongProfanity", "Fuck", "sp_f_word"),
        (7, "strongProfanity", "fuck", "sp_f_word"),
        (9, "crudeBodilyLanguage", "Shit", "cb_s_word"),
        (9, "mildObscenity", "Damn", "mo_damn"),
    ]
    assert r.entries_scanned == 5


def test_one_expression_counts_once():
    r = scan([(1, "Son of a bitch! Oh, bloody hell. God damn it. Jesus Christ!")])
    assert r.mildObscenity.occurrenceCount == 2        # son of a bitch, bloody hell
    assert r.religiousProfanityAndExclamation.occurrenceCount == 2  # god damn, Jesus Christ
    assert {m.span for m in r.matches} == {"Son of a bitch", "bloody hell", "God damn",
                                           "Jesus Christ"}


def test_empty_and_missing_text():
    r = scan([])
    assert safety_to_json(r) == {
        cat: {"occurrenceCount": 0, "evidenceLineCount": 0, "evidenceSubtitleIndices": []}
        for cat in CATEGORIES}
    assert scan([(1, ""), (2, None)]).matches == []


def test_dataframe_and_dict_inputs_equal_tuple_input():
    track = [(1, "Shit!"), (2, "Hello."), (4, "For God's sake, you bastard.")]
    frame = pl.DataFrame({"index": [1, 2, 4], "content": [t for _, t in track],
                          "timeframe": ["a", "b", "c"]})
    assert scan(frame) == scan(track)
    assert scan([{"index": i, "content": t} for i, t in track]) == scan(track)


def test_safety_to_json_is_spec_a11_shape():
    r = scan([(1, "Oh my God, what the fuck?"), (2, "Asshole!"), (3, "Damn.")])
    out = safety_to_json(r)
    assert list(out) == list(CATEGORIES)
    for value in out.values():
        assert list(value) == ["occurrenceCount", "evidenceLineCount", "evidenceSubtitleIndices"]
        assert all(isinstance(i, int) for i in value["evidenceSubtitleIndices"])
    assert out["strongProfanity"] == {"occurrenceCount": 1, "evidenceLineCount": 1,
                                      "evidenceSubtitleIndices": [1]}
    assert out["crudeBodilyLanguage"]["evidenceSubtitleIndices"] == [2]
    assert out["mildObscenity"]["evidenceSubtitleIndices"] == [3]
    assert json.loads(json.dumps(out)) == out


def test_matches_frame_is_the_diagnostic_table():
    r = scan([(4, "Shit, shit!"), (9, "Oh my God.")])
    frame = safety.matches_frame(r)
    assert frame.columns == ["index", "category", "span", "rule", "start", "end"]
    assert frame.rows() == [
        (4, "crudeBodilyLanguage", "Shit", "cb_s_word", 0, 4),
        (4, "crudeBodilyLanguage", "shit", "cb_s_word", 6, 10),
        (9, "religiousProfanityAndExclamation", "Oh my God", "rp_oh_my_god", 0, 9),
    ]


# --------------------------------------------------------------------------------------------
# stripping before matching
# --------------------------------------------------------------------------------------------
def test_clean_text_strips_markup_directions_and_labels():
    assert clean_text('<font color="#ff0">{\\an8}GUAPO: Hey, <b>you</b></font>') == "Hey, you"
    assert clean_text("[MAN (ON PHONE)] Listen.") == "Listen."
    assert clean_text("- MAN 2: What?\n- (GASPS) No!") == "- What?\n- No!"
    assert clean_text("GUNSHOT\n♪ UPBEAT MUSIC PLAYING ♪\nRun!") == "Run!"
    assert clean_text("HELP ME!") == "HELP ME!"
    assert clean_text("It\u2019s fine.") == "It's fine."


def test_stage_directions_are_not_counted():
    track = [
        (1, "[MAN SHOUTS: FUCK!]"),
        (2, "(muttering) Shit."),
        (3, "<i>(GOD DAMN IT, SHE SAYS)</i>"),
        (4, "SCREAMING FUCK IN THE DISTANCE"),
        (5, "(FART NOISE)"),
        (6, "DICK: Hello, everyone."),
    ]
    r = scan(track)
    assert r.strongProfanity.occurrenceCount == 0
    assert r.religiousProfanityAndExclamation.occurrenceCount == 0
    assert r.crudeBodilyLanguage.evidenceSubtitleIndices == [2]
    assert r.crudeBodilyLanguage.occurrenceCount == 1


def test_shouted_capital_dialogue_counts_and_capital_tracks_keep_lines():
    assert scan([(1, "FUCK!"), (2, "Quiet, please.")]).strongProfanity.occurrenceCount == 1
    caps = [(i, text) for i, text in enumerate(
        ["WHAT THE HELL IS THIS.", "GET THE SHIT OUT.", "I DON'T KNOW.", "Okay."], start=1)]
    r = scan(caps)
    assert r.caps_track is True
    assert r.mildObscenity.evidenceSubtitleIndices == [1]
    assert r.crudeBodilyLanguage.evidenceSubtitleIndices == [2]


# --------------------------------------------------------------------------------------------
# SPEC A9 contextual exclusions and decisions, in context
# --------------------------------------------------------------------------------------------
def test_capitalised_personal_name_is_not_crude():
    r = scan([(1, "Dick Grayson, come here."), (2, "Tell Dick I said hi."),
              (3, "Don't be a dick, Dick.")])
    assert r.crudeBodilyLanguage.occurrenceCount == 1
    assert r.crudeBodilyLanguage.evidenceSubtitleIndices == [3]
    assert [m.span for m in r.matches] == ["dick"]


def test_food_breast_and_spatial_bottom_are_excluded():
    r = scan([(1, "Chicken breast or breast of lamb?"), (2, "It sank to the bottom of the lake."),
              (3, "She covered her breasts."), (4, "Get off your bottom and help.")])
    assert r.crudeBodilyLanguage.evidenceSubtitleIndices == [3, 4]
    assert r.crudeBodilyLanguage.occurrenceCount == 2


def test_ordinary_religious_dialogue_versus_exclamation():
    prayer = [(1, "God bless you, my child."), (2, "Let us pray. Dear Lord, hear our prayer."),
              (3, "We thank God for this food."), (4, "In the name of Jesus Christ. Amen."),
              (5, "God will be there for all who need it."), (6, "Jesus loves you.")]
    assert scan(prayer).religiousProfanityAndExclamation.occurrenceCount == 0
    exclaim = [(1, "Oh my God!"), (2, "For God's sake!"), (3, "Jesus Christ!"), (4, "Goddamn it."),
               (5, "Christ!"), (6, "Thank God you're here.")]
    r = scan(exclaim)
    assert r.religiousProfanityAndExclamation.evidenceSubtitleIndices == [1, 2, 3, 4, 5, 6]
    assert r.mildObscenity.occurrenceCount == 0  # goddamn is religious, not also "damn"


def test_apostrophe_forms_count_and_wildcards_do_not():
    r = scan([(1, "You fuckin' idiot."), (2, "You fuckin\u2019 idiot."), (3, "What the f*** ?"),
              (4, "What the f**k?"), (5, "Sh*t!"), (6, "Motherfuckin' rain.")])
    assert r.strongProfanity.evidenceSubtitleIndices == [1, 2, 6]
    assert r.crudeBodilyLanguage.occurrenceCount == 0
    assert {m.span for m in r.matches} == {"fuckin'", "Motherfuckin'"}


def test_derivatives_and_euphemisms():
    r = scan([(1, "motherfucker"), (2, "fucking"), (3, "fucked"), (4, "effing"), (5, "frickin'")])
    assert r.strongProfanity.evidenceSubtitleIndices == [1, 2, 3]
    assert r.mildObscenity.evidenceSubtitleIndices == [4, 5]


def test_gestures_are_out_of_scope():
    r = scan([(1, "(GIVES HIM THE FINGER)"), (2, "[flips him off]"), (3, "Look at this.")])
    assert r.matches == []


# --------------------------------------------------------------------------------------------
# real English subtitle tracks (../shared/realdata/srt/en)
# --------------------------------------------------------------------------------------------
def _srt_entries(path: Path) -> list[tuple[int, str]]:
    raw = path.read_bytes()
    if raw[:2] in (b"\xff\xfe", b"\xfe\xff"):
        text = raw.decode("utf-16")
    else:
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError:
            text = raw.decode("cp1252")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    out = []
    for block in re.split(r"\n\s*\n", text.strip()):
        lines = block.split("\n")
        if len(lines) >= 2 and lines[0].strip().isdigit() and "-->" in lines[1]:
            out.append((int(lines[0].strip()), "\n".join(lines[2:])))
    return out


EN_TRACKS = {
    # file: {category: evidence indices}; every index reviewed against the subtitle text
    "en__the_incredible_hulk_2008__cp1252_lf_yify.srt": {
        "strongProfanity": [],
        "crudeBodilyLanguage": [186, 197, 358, 480, 545, 775],
        "mildObscenity": [44, 81, 257, 330, 499, 689, 736, 738, 791],
        "religiousProfanityAndExclamation": [273, 360, 366, 389, 594, 607, 745],
    },
    "en__overdrive_2017__cp1252_euro_sign.srt": {
        "strongProfanity": [],
        "crudeBodilyLanguage": [47, 83, 87, 109, 271, 278, 283, 566, 612, 982],
        "mildObscenity": [108, 252, 299, 508, 549, 559, 682, 807, 835, 857, 1016],
        "religiousProfanityAndExclamation": [116, 635, 1062, 1065],
    },
    "en__the_conjuring_2_2016__cp1252_smart_quotes.srt": {
        "strongProfanity": [],
        "crudeBodilyLanguage": [173, 911, 1191],
        "mildObscenity": [75, 89, 298, 323, 858, 927, 1083],
        "religiousProfanityAndExclamation": [238, 287, 289, 331, 469, 749, 752, 774, 888, 955,
                                             964, 965, 1117, 1132, 1175, 1262, 1279, 1282],
    },
    "en__ferdinand_2017__cp1252_sdh.srt": {
        "strongProfanity": [],
        "crudeBodilyLanguage": [582, 587, 634, 814, 1318, 1584],
        "mildObscenity": [1315],
        "religiousProfanityAndExclamation": [],
    },
    "en__manhunt_2017__utf16le_bom.srt": {
        "strongProfanity": [],
        "crudeBodilyLanguage": [1091, 1180],
        "mildObscenity": [61, 205, 222, 591, 598, 724, 835, 851, 1154, 1155],
        "religiousProfanityAndExclamation": [],
    },
}


@pytest.mark.realdata
@pytest.mark.parametrize("name", sorted(EN_TRACKS))
def test_real_english_tracks(realdata_dir, name):
    entries = _srt_entries(realdata_dir / "srt" / "en" / name)
    result = scan(entries)
    got = {cat: getattr(result, cat).evidenceSubtitleIndices for cat in CATEGORIES}
    assert got == EN_TRACKS[name]
    known = {i for i, _ in entries}
    for cat in CATEGORIES:
        c = getattr(result, cat)
        assert set(c.evidenceSubtitleIndices) <= known
        assert c.evidenceLineCount == len(c.evidenceSubtitleIndices)
        assert c.occurrenceCount >= c.evidenceLineCount
    # the pre-filter changes nothing
    assert scan(entries, prefilter=False) == result


@pytest.mark.realdata
def test_real_track_counts_and_spans(realdata_dir):
    entries = _srt_entries(realdata_dir / "srt" / "en" / "en__manhunt_2017__utf16le_bom.srt")
    r = scan(entries)
    assert r.mildObscenity.occurrenceCount == 11  # entry 1155 says "Damn it! Damn it!"
    assert [m.span for m in r.matches if m.index == 1155] == ["Damn", "Damn"]
    entries = _srt_entries(realdata_dir / "srt" / "en" / "en__ferdinand_2017__cp1252_sdh.srt")
    by_index = dict(entries)
    assert "Balls!" in by_index[677]  # the hedgehogs curling up: not crude language
    assert 677 not in scan(entries).crudeBodilyLanguage.evidenceSubtitleIndices


def test_synthetic_track_evidence_counted_once_per_line():
    # the speed target of this scan (50 ms CPU) is in benchmarks/bench_targets.py, not here
    lines = ["I told you, we need to leave now.", "<i>What the hell was that?</i>",
             "(DOOR CREAKS)", "Oh my God, he's bleeding!", "- Shit.\n- Get down!",
             "The bottom of the stairs is dark.", "Dick Grayson will be here at noon."]
    entries = [(i + 1, lines[i % len(lines)]) for i in range(1500)]
    r = scan(entries)
    per = 1500 // len(lines)
    assert r.crudeBodilyLanguage.evidenceLineCount in (per, per + 1)


# --------------------------------------------------------------------------------------------
# the sample world's planted lines (cinesub.sample.phrases)
# --------------------------------------------------------------------------------------------
def test_sample_world_phrase_banks_are_found_exactly():
    from cinesub.sample import phrases

    assert tuple(phrases.A9_CATEGORIES) == CATEGORIES
    track = []
    expected = {cat: [] for cat in CATEGORIES}
    counts = {cat: 0 for cat in CATEGORIES}
    for n, phrase in enumerate(phrases.PHRASES, start=1):
        track.append((n, phrase.text["en"]))
        for kim, k in phrase.tags.items():
            cat = phrases.KIM_TO_A9[kim]
            counts[cat] += k
            if n not in expected[cat]:
                expected[cat].append(n)
    result = scan(track)
    for cat in CATEGORIES:
        got = getattr(result, cat)
        assert got.evidenceSubtitleIndices == expected[cat], cat
        assert got.occurrenceCount == counts[cat], cat
    trap_or_plain = {n for n, p in enumerate(phrases.PHRASES, start=1) if not p.tags}
    assert not any(m.index in trap_or_plain for m in result.matches)
