"""Language consistency (validators.language): six languages by hand, Malay vs Indonesian,
Arabic vs Persian, determinism, sampling and the real subtitle files (speed: benchmarks/bench_targets.py;
accuracy of the identifier against the other candidates: benchmarks/bench_langid.py)."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import polars as pl
import pytest

from cinesub.settings import LANGUAGES, Thresholds
from validators.language import MAX_CHUNKS, check_language, disambiguate, language_share

LINES: dict[str, list[str]] = {
    "en": [
        "Where were you last night?",
        "I told you, I was working late at the office.",
        "You never work late on Fridays.",
        "The boss wanted the report by Monday.",
        "Then why did your phone go straight to voicemail?",
        "The battery died. I forgot the charger again.",
        "We need to talk about what happened at the wedding.",
        "There is nothing to talk about, it was a misunderstanding.",
        "Your brother doesn't think so.",
        "My brother says a lot of things when he has been drinking.",
        "Just promise me you will be honest with me from now on.",
        "I promise. Can we please have dinner before it gets cold?",
        "The car is making that strange noise again.",
        "I will take it to the garage tomorrow morning.",
        "Don't forget to pick up the kids after school.",
        "Have you seen my keys? I left them on the table.",
        "They are in the kitchen, next to the coffee machine.",
        "We should visit your parents this weekend.",
        "Your mother just wants to see her grandchildren more often.",
        "The weather is supposed to be terrible all week.",
        "Then we will stay inside and watch old movies.",
        "That is the best plan I have heard in months.",
        "Listen to me carefully, we do not have much time.",
        "The police are on their way here.",
    ],
    "ar": [
        "أين كنت الليلة الماضية؟",
        "قلت لك، كنت أعمل حتى وقت متأخر في المكتب.",
        "أنت لا تعمل أبداً حتى وقت متأخر يوم الجمعة.",
        "المدير أراد التقرير قبل يوم الاثنين.",
        "لماذا كان هاتفك مغلقاً طوال الوقت؟",
        "نفدت البطارية ونسيت الشاحن مرة أخرى.",
        "يجب أن نتحدث عما حدث في حفل الزفاف.",
        "لا يوجد ما نتحدث عنه، كان مجرد سوء فهم.",
        "أخوك لا يعتقد ذلك.",
        "أخي يقول أشياء كثيرة عندما يشرب.",
        "عدني فقط أن تكون صادقاً معي من الآن فصاعداً.",
        "أعدك. هل يمكننا تناول العشاء قبل أن يبرد؟",
        "السيارة تصدر ذلك الصوت الغريب مرة أخرى.",
        "سآخذها إلى المرآب صباح الغد.",
        "لا تنس أن تحضر الأطفال من المدرسة.",
        "هل رأيت مفاتيحي؟ تركتها على الطاولة.",
        "إنها في المطبخ بجانب آلة القهوة.",
        "يجب أن نزور والديك في عطلة نهاية الأسبوع.",
        "والدتك تريد رؤية أحفادها أكثر.",
        "الطقس سيكون سيئاً طوال الأسبوع.",
        "إذن سنبقى في المنزل ونشاهد الأفلام القديمة.",
        "هذه أفضل خطة سمعتها منذ شهور.",
        "استمع إلي جيداً، ليس لدينا الكثير من الوقت.",
        "الشرطة في طريقها إلى هنا الآن.",
    ],
    "fa": [
        "دیشب کجا بودی؟",
        "بهت گفتم، تا دیروقت توی دفتر کار می‌کردم.",
        "تو هیچ‌وقت جمعه‌ها تا دیروقت کار نمی‌کنی.",
        "رئیس گزارش رو تا دوشنبه می‌خواست.",
        "پس چرا گوشیت خاموش بود؟",
        "باتریش تموم شد، شارژرم رو یادم رفت.",
        "باید درباره‌ی اتفاقی که توی عروسی افتاد حرف بزنیم.",
        "چیزی برای حرف زدن نیست، فقط یه سوءتفاهم بود.",
        "برادرت این‌طور فکر نمی‌کنه.",
        "برادرم وقتی مست می‌کنه خیلی چیزها می‌گه.",
        "فقط بهم قول بده از این به بعد باهام صادق باشی.",
        "قول می‌دم. حالا می‌شه قبل از اینکه غذا سرد بشه شام بخوریم؟",
        "ماشین دوباره اون صدای عجیب رو می‌ده.",
        "فردا صبح می‌برمش تعمیرگاه.",
        "یادت نره بچه‌ها رو از مدرسه بیاری.",
        "کلیدهام رو ندیدی؟ گذاشته بودمشون روی میز.",
        "توی آشپزخونه‌ان، کنار قهوه‌ساز.",
        "باید آخر هفته بریم پیش پدر و مادرت.",
        "مادرت فقط می‌خواد نوه‌هاش رو بیشتر ببینه.",
        "قراره کل هفته هوا خیلی بد باشه.",
        "پس توی خونه می‌مونیم و فیلم‌های قدیمی نگاه می‌کنیم.",
        "این بهترین نقشه‌ایه که توی این چند ماه شنیدم.",
        "خوب گوش کن، وقت زیادی نداریم.",
        "پلیس داره میاد اینجا.",
    ],
    "id": [
        "Kamu dari mana saja semalam?",
        "Aku sudah bilang, aku lembur di kantor.",
        "Kamu tidak pernah lembur pada hari Jumat.",
        "Bos ingin laporannya selesai hari Senin.",
        "Kenapa teleponmu langsung masuk ke kotak suara?",
        "Baterainya habis, aku lupa membawa pengisi daya.",
        "Kita harus bicara tentang kejadian di pesta pernikahan.",
        "Tidak ada yang perlu dibicarakan, itu cuma salah paham.",
        "Kakakmu tidak berpikir begitu.",
        "Kakakku banyak bicara kalau sedang mabuk.",
        "Janji padaku kamu akan jujur mulai sekarang.",
        "Aku janji. Bisakah kita makan malam sebelum dingin?",
        "Mobilnya mengeluarkan suara aneh lagi.",
        "Besok pagi aku bawa ke bengkel.",
        "Jangan lupa jemput anak-anak dari sekolah.",
        "Kamu lihat kunciku? Tadi kutaruh di meja.",
        "Ada di dapur, di sebelah mesin kopi.",
        "Kita harus mengunjungi orang tuamu akhir pekan ini.",
        "Ibumu cuma ingin lebih sering bertemu cucunya.",
        "Katanya cuacanya akan buruk sepanjang minggu.",
        "Kalau begitu kita di rumah saja dan menonton film lama.",
        "Itu rencana terbaik yang kudengar selama berbulan-bulan.",
        "Dengarkan baik-baik, waktu kita tidak banyak.",
        "Kau tidak boleh pergi sendirian, polisi sedang dalam perjalanan ke sini.",
    ],
    "ro": [
        "Unde ai fost aseară?",
        "Ți-am spus, am lucrat până târziu la birou.",
        "Nu lucrezi niciodată până târziu vinerea.",
        "Șeful voia raportul până luni.",
        "Atunci de ce telefonul tău a intrat direct în căsuța vocală?",
        "S-a descărcat bateria, am uitat încărcătorul din nou.",
        "Trebuie să vorbim despre ce s-a întâmplat la nuntă.",
        "Nu e nimic de discutat, a fost o neînțelegere.",
        "Fratele tău nu crede asta.",
        "Fratele meu spune multe când bea.",
        "Promite-mi doar că vei fi sincer cu mine de acum înainte.",
        "Promit. Acum putem să mâncăm înainte să se răcească?",
        "Mașina face iar zgomotul acela ciudat.",
        "O duc la service mâine dimineață.",
        "Nu uita să iei copiii de la școală.",
        "Mi-ai văzut cheile? Le-am lăsat pe masă.",
        "Sunt în bucătărie, lângă aparatul de cafea.",
        "Ar trebui să-ți vizităm părinții în weekend.",
        "Mama ta vrea doar să-și vadă nepoții mai des.",
        "Vremea va fi groaznică toată săptămâna.",
        "Atunci rămânem în casă și ne uităm la filme vechi.",
        "E cel mai bun plan pe care l-am auzit de luni de zile.",
        "Ascultă-mă cu atenție, nu mai avem mult timp.",
        "Poliția e pe drum încoace.",
    ],
    "vi": [
        "Tối qua anh đã ở đâu?",
        "Anh đã nói rồi, anh làm việc muộn ở văn phòng.",
        "Anh chưa bao giờ làm muộn vào thứ Sáu.",
        "Sếp muốn có báo cáo trước thứ Hai.",
        "Vậy sao điện thoại của anh lại chuyển thẳng vào hộp thư thoại?",
        "Hết pin rồi, anh lại quên mang sạc.",
        "Chúng ta cần nói về chuyện đã xảy ra ở đám cưới.",
        "Chẳng có gì để nói cả, chỉ là hiểu lầm thôi.",
        "Anh trai em không nghĩ vậy.",
        "Anh trai anh nói nhiều thứ khi say rượu.",
        "Hãy hứa với em rằng từ giờ anh sẽ thành thật.",
        "Anh hứa. Giờ chúng ta ăn tối trước khi đồ ăn nguội được không?",
        "Chiếc xe lại phát ra tiếng động lạ đó.",
        "Sáng mai anh sẽ mang nó đến gara.",
        "Đừng quên đón bọn trẻ ở trường.",
        "Em có thấy chìa khóa của anh không? Anh để trên bàn.",
        "Chúng ở trong bếp, cạnh máy pha cà phê.",
        "Cuối tuần này chúng ta nên về thăm bố mẹ anh.",
        "Mẹ anh chỉ muốn được gặp các cháu thường xuyên hơn.",
        "Thời tiết sẽ rất tệ cả tuần.",
        "Vậy thì chúng ta ở nhà và xem phim cũ.",
        "Đó là kế hoạch hay nhất anh nghe được trong mấy tháng qua.",
        "Nghe anh nói này, chúng ta không còn nhiều thời gian.",
        "Cảnh sát đang trên đường tới đây.",
    ],
}
MALAY = [
    "Awak pergi mana semalam?",
    "Saya dah beritahu awak, saya kerja lewat di pejabat.",
    "Awak tak pernah kerja lewat pada hari Jumaat.",
    "Bos mahu laporan itu siap sebelum hari Isnin.",
    "Kenapa telefon awak terus masuk ke peti suara?",
    "Bateri habis, saya terlupa bawa pengecas.",
    "Kita perlu bercakap tentang apa yang berlaku di majlis perkahwinan.",
    "Tak ada apa yang perlu dicakapkan, itu cuma salah faham.",
    "Abang awak tak fikir macam tu.",
    "Abang saya cakap macam-macam bila dia mabuk.",
    "Janji dengan saya awak akan jujur mulai sekarang.",
    "Saya janji. Boleh kita makan malam sebelum sejuk?",
    "Kereta itu berbunyi pelik lagi.",
    "Esok pagi saya bawa ke bengkel.",
    "Jangan lupa ambil budak-budak dari sekolah.",
    "Awak nampak kunci saya? Saya letak atas meja tadi.",
    "Ada di dapur, sebelah mesin kopi.",
    "Kita patut melawat mak ayah awak hujung minggu ini.",
    "Mak awak cuma mahu jumpa cucu dia lebih kerap.",
    "Cuaca akan buruk sepanjang minggu kerana ribut.",
    "Kalau begitu kita duduk rumah sahaja dan tengok filem lama.",
    "Itu rancangan terbaik yang saya dengar dalam beberapa bulan.",
    "Dengar sini baik-baik, kita tak ada banyak masa.",
    "Polis sedang dalam perjalanan ke sini.",
]


def frame(lines: list[str]) -> pl.DataFrame:
    return pl.DataFrame(
        {"index": list(range(1, len(lines) + 1)), "content": lines},
        schema={"index": pl.Int64, "content": pl.String},
    )


@pytest.fixture(scope="module", autouse=True)
def _warm_profiles():
    language_share(frame(["warm up the language profiles once"]), "en")


# ---------------------------------------------------------------------------------------------
# the six languages, built by hand
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("language", LANGUAGES)
def test_hand_built_track_is_its_language(language):
    lines = LINES[language]
    assert len(lines) >= 20
    result = language_share(frame(lines), language)
    assert result["share"] >= 0.8, result
    assert result["detected"] == language
    assert result["n_entries"] == len(lines)
    assert sum(result["by_language"].values()) == pytest.approx(1.0)
    for other in LANGUAGES:
        if other != language:
            assert language_share(frame(lines), other)["share"] <= 0.2


@pytest.mark.parametrize("language", LANGUAGES)
def test_check_language_passes_own_language_and_flags_the_others(language):
    thresholds = Thresholds()
    assert check_language(frame(LINES[language]), language, thresholds) is None
    wrong = next(other for other in LANGUAGES if other != language)
    flag = check_language(frame(LINES[wrong]), language, thresholds)
    assert flag is not None and flag.layer == "language_mismatch" and flag.severity == "review"
    assert flag.value < thresholds.language_min_share
    assert flag.threshold == thresholds.language_min_share
    assert flag.evidence["detected"] == wrong
    assert flag.evidence["sample_indices"] and all(
        1 <= i <= len(LINES[wrong]) for i in flag.evidence["sample_indices"]
    )
    json.dumps(flag.evidence)


# ---------------------------------------------------------------------------------------------
# script-based disambiguation
# ---------------------------------------------------------------------------------------------
def test_malay_is_not_indonesian():
    result = language_share(frame(MALAY), "id")
    assert result["detected"] == "ms"
    assert result["share"] < 0.8
    assert check_language(frame(MALAY), "id", Thresholds()) is not None


def test_indonesian_with_tidak_boleh_stays_indonesian():
    # "tidak boleh" is everyday Indonesian (the real id__detective_k track uses it)
    lines = [line for line in LINES["id"]] + ["Kau tidak boleh bertanya apapun tentangku."] * 3
    assert language_share(frame(lines), "id")["share"] >= 0.8


def test_arabic_and_persian_are_distinguished():
    arabic = language_share(frame(LINES["ar"]), "ar")
    persian = language_share(frame(LINES["fa"]), "fa")
    assert arabic["detected"] == "ar" and "fa" not in arabic["by_language"]
    assert persian["detected"] == "fa" and "ar" not in persian["by_language"]


def test_persian_typed_in_cp1256_letters_is_still_persian():
    # cp1256 has no Farsi yeh: legacy Persian files write ی as Arabic ي (keheh ک stays)
    legacy = [line.replace("ی", "ي") for line in LINES["fa"]]
    assert language_share(frame(legacy), "fa")["share"] >= 0.8


def test_disambiguate_rules():
    assert disambiguate("ar", "پدرم گفت که چرا نگاه می‌کنی") == "fa"
    assert disambiguate("fa", "قالت إن المدرسة كانت مغلقة") == "ar"
    assert disambiguate("id", "awak tak boleh pergi sahaja kerana saya mahu cakap") == "ms"
    assert disambiguate("id", "kamu tidak boleh pergi karena aku bisa saja") == "id"
    assert disambiguate("it", "Mașina face iar zgomotul acela ciudat, știi?") == "ro"
    assert disambiguate("tr", "Şimdi ağlıyorsun, değil mi?") == "tr"
    assert disambiguate("en", "Tối qua anh đã ở đâu?") == "vi"


def test_decomposed_vietnamese_is_vietnamese():
    # cp1258 decodes to base letters plus combining tone marks
    decomposed = [unicodedata.normalize("NFD", line) for line in LINES["vi"]]
    assert decomposed != LINES["vi"]
    assert language_share(frame(decomposed), "vi")["share"] >= 0.8


def test_romanian_with_cedilla_letters_is_romanian():
    cedilla = [line.translate(str.maketrans("șțȘȚ", "şţŞŢ")) for line in LINES["ro"]]
    assert language_share(frame(cedilla), "ro")["share"] >= 0.8


# ---------------------------------------------------------------------------------------------
# robustness, determinism, sampling
# ---------------------------------------------------------------------------------------------
def test_markup_and_letterless_entries_are_ignored():
    lines = []
    for line in LINES["en"]:
        lines += [f"<i>{line}</i>", "♪ ♪", "{\\an8}" + line, "...", "12"]
    result = language_share(frame(lines), "en")
    assert result["n_entries"] == 2 * len(LINES["en"])
    assert result["share"] >= 0.8


def test_short_lines_are_chunked():
    short = ["Yes.", "No!", "Come here.", "What?", "Hurry up!", "Get down!", "Thank you.",
             "Who is it?", "Run!", "Not now.", "Wait for me.", "I know.", "Help me!",
             "Be careful.", "Good night.", "Where is he?", "Stop it.", "Sit down.",
             "Let's go.", "Look out!"] * 3
    result = language_share(frame(short), "en")
    assert result["share"] >= 0.8
    assert result["n_chunks"] < len(short) / 5


def test_deterministic_whatever_the_seed():
    mixed = frame([LINES[lang][i] for i in range(24) for lang in ("id", "ro", "en")])
    runs = [language_share(mixed, "id", seed=s) for s in (3, 3, 0)]
    assert runs[0] == runs[1] == runs[2]
    assert set(runs[0]["by_language"]) <= {"id", "ro", "en", "ms"} and runs[0]["share"] < 0.8


def test_planted_wrong_language_lines_are_the_mismatches():
    # an English track with one Vietnamese stretch: the flagged sample indices point into it
    lines = [LINES["en"][i % 24] for i in range(400)]
    lines[200:260] = [LINES["vi"][i % 24] for i in range(60)]
    result = language_share(frame(lines), "en")
    assert 0.8 <= result["share"] < 0.95, result
    assert "vi" in result["by_language"]
    assert result["mismatch_indices"] and all(195 <= i <= 260 for i in result["mismatch_indices"]), result


def test_at_most_forty_chunks_spread_over_the_track():
    lines = [LINES["en"][i % 24] for i in range(5_000)]
    lines[-60:] = [LINES["fa"][i % 24] for i in range(60)]  # a Persian tail
    result = language_share(frame(lines), "en")
    assert result["n_chunks"] == MAX_CHUNKS
    assert "fa" in result["by_language"]  # the last chunk is sampled
    assert result["mismatch_indices"] and min(result["mismatch_indices"]) > 4_900


def test_track_without_letters():
    result = language_share(frame(["♪♪", "...", "123"]), "en")
    assert result == {
        "share": 0.0,
        "detected": None,
        "n_chunks": 0,
        "by_language": {},
        "n_entries": 0,
        "mismatch_indices": [],
    }
    flag = check_language(frame([]), "en", Thresholds())
    assert flag is not None and flag.value == 0.0 and "no text" in flag.detail


def test_threshold_comes_from_settings():
    lines = LINES["en"] * 9 + LINES["ro"]  # ~10 % Romanian
    share = language_share(frame(lines), "en")["share"]
    assert 0.8 <= share < 0.99
    assert check_language(frame(lines), "en", Thresholds()) is None
    assert check_language(frame(lines), "en", Thresholds(language_min_share=0.99)) is not None


# ---------------------------------------------------------------------------------------------
# real subtitle files (../shared/realdata/srt)
# ---------------------------------------------------------------------------------------------
from _realdata import manifest_codecs, read_track  # noqa: E402


def real_files(realdata: Path) -> list[tuple[str, str]]:
    return [(f, c) for f, c in sorted(manifest_codecs(realdata).items()) if f.split("/")[0] in LANGUAGES]


@pytest.mark.realdata
def test_every_real_track_is_its_language(realdata_dir):
    files = real_files(realdata_dir)
    assert {f.split("/")[0] for f, _ in files} == set(LANGUAGES)
    for name, codec in files:
        language = name.split("/")[0]
        entries = read_track(realdata_dir / "srt" / name, codec)
        assert entries.height >= 30, name
        result = language_share(entries, language)
        assert result["share"] >= 0.8, (name, result)
        assert result["detected"] == language, (name, result)
        assert check_language(entries, language, Thresholds()) is None, name


@pytest.mark.realdata
def test_real_arabic_and_persian_files_are_distinguished(realdata_dir):
    codecs = manifest_codecs(realdata_dir)
    for film in ("three_billboards_2017", "this_means_war_2012"):
        for language in ("ar", "fa"):
            name = next(f for f in codecs if f.startswith(f"{language}/{language}__{film}"))
            result = language_share(read_track(realdata_dir / "srt" / name, codecs[name]), language)
            other = "fa" if language == "ar" else "ar"
            assert result["detected"] == language, name
            assert result["by_language"].get(other, 0.0) <= 0.05, (name, result)


@pytest.mark.realdata
def test_real_french_track_is_flagged_for_every_corpus_language(realdata_dir):
    name = "other_lang/fr__man_of_steel_2013__opensubtitlescom_api_download.srt"
    entries = read_track(realdata_dir / "srt" / name, manifest_codecs(realdata_dir)[name])
    assert language_share(entries, "en")["detected"] == "fr"
    for language in LANGUAGES:
        flag = check_language(entries, language, Thresholds())
        assert flag is not None and flag.evidence["detected"] == "fr"


@pytest.mark.realdata
def test_real_track_identified(realdata_dir):
    # its speed target (300 ms CPU) is in benchmarks/bench_targets.py
    name = "en/en__ferdinand_2017__cp1252_sdh.srt"
    entries = read_track(realdata_dir / "srt" / name, manifest_codecs(realdata_dir)[name])
    assert entries.height >= 1_500
    share = language_share(entries, "en")
    assert share["detected"] == "en" and share["share"] > 0.9 and share == language_share(entries, "en"), share


def test_bench_langid_short_texts_use_the_validators_chunks():
    """The benchmark cuts its 1-line, 3-line and chunk samples with the validator's own helpers
    (a changed helper signature once broke `make bench` with no test noticing)."""
    from benchmarks.bench_langid import _short_texts

    lines = [f"This is line number {i} of an English subtitle track." for i in range(60)]
    frame = pl.DataFrame({"index": list(range(1, 61)), "content": lines})
    out = _short_texts([{"language": "en", "frame": frame}], per_track=5)
    assert set(out) == {"line1", "line3", "chunk200"}
    assert all(len(v) == 5 and all(lang == "en" and text for lang, text in v) for v in out.values())
    assert all(len(text) > 100 for _, text in out["chunk200"])  # chunks join consecutive lines
