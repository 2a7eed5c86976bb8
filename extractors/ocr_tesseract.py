"""Tesseract OCR (issue 17 point 3) for page images whose text layer is missing or unusable.

Pure functions from outside bytes (a page image, a page's text layer) to text and a reason code;
the stages (flows/stages/hollywood/variety.py, cce.py) call :func:`resolve_page_text` where a
page's text layer is ``None``/empty or fails :func:`unusable_reason`, so the Tesseract text feeds
the Variety page filter, the OCR-rules extractor and the CCE parser like an IA text layer would.

**Unusable**, measurably (:func:`text_quality`): a token is a whitespace-separated run stripped of
surrounding punctuation; a *dictionary-like* token is ≥ 2 letters only (inner ``'``/``-``
allowed), holds a vowel (``aeiouy``) and is lower case, Capitalised or ALL CAPS. Tokens holding a
digit (``15Jan34``, ``$12,000``, ``LP4520``) are neutral: counted in neither part of the ratio.
A text layer is unusable when it has fewer than ``min_words`` dictionary-like tokens
(``hollywood.ocr_min_words``) or when dictionary-like tokens are less than ``min_word_ratio``
(``hollywood.ocr_min_word_ratio``) of the non-numeric tokens — the signature of OCR garbage
(``l'\\^i ,;tr 1Ii``) or of an empty layer.

Reason codes (``PageText.reason``): ``no_text_layer`` / ``unusable_text_layer`` (why Tesseract
was asked; the text is Tesseract's), ``ocr_unavailable`` (pytesseract or the ``tesseract`` binary
missing, or ``hollywood.ocr_engine = 'none'``), ``no_page_image``, ``ocr_failed`` (Tesseract or
Pillow raised on this image; the detail says what). Never an exception for one page.
``PageText.engine`` is which engine produced the text: ``ia-ocr`` (the archive's text layer),
``tesseract`` (:data:`ENGINE`), or None (no text).
"""

from __future__ import annotations

import functools
import io
import re
from dataclasses import dataclass

#: ``engine`` of text Tesseract produced / of the archive's own text layer
ENGINE, TEXT_LAYER_ENGINE = "tesseract", "ia-ocr"
NO_TEXT_LAYER, UNUSABLE_TEXT_LAYER = "no_text_layer", "unusable_text_layer"
OCR_UNAVAILABLE, OCR_FAILED, NO_PAGE_IMAGE = "ocr_unavailable", "ocr_failed", "no_page_image"
#: defaults of ``hollywood.ocr_min_words`` / ``hollywood.ocr_min_word_ratio`` / ``hollywood.ocr_lang``
MIN_WORDS, MIN_WORD_RATIO, LANG = 5, 0.5, "eng"
#: Tesseract page segmentation modes: 6 = one uniform block of text (Variety pages: the lowest
#: error rate on the sample's gold pages); 4 = one column of text of variable sizes, which keeps the
#: blank line after a heading (CCE pages: the parser splits the catalog's heading from its first entry)
PSM, PSM_CATALOG = 6, 4
#: an image narrower than this is enlarged (LANCZOS, by a whole factor, at most 3) before Tesseract
#: reads it: Tesseract wants ~20 px capital height, and a page rendered at 100 dpi (the CCE PDF
#: pages, ``PAGE_DPI``) or the sample's 900–1000 px pages have 9–10 px (the benchmark: CER 0.024 →
#: 0.004 on a CCE renewal page). IA's page scans (2500–4000 px wide) are read as they are.
MIN_WIDTH = 1800

_STRIP = "\"'`.,;:!?()[]{}<>«»“”‘’*_|/\\©®°§#&+=~^"
_WORD_RE = re.compile(r"^[A-Za-z]+(?:['\-][A-Za-z]+)*$")
_VOWEL_RE = re.compile(r"[aeiouyAEIOUY]")


@dataclass(frozen=True)
class TextQuality:
    tokens: int       # all tokens
    words: int        # dictionary-like tokens
    alpha: int        # tokens without a digit (the ratio's denominator)

    @property
    def ratio(self) -> float:
        return self.words / self.alpha if self.alpha else 0.0


@dataclass(frozen=True)
class PageText:
    text: str | None        # the page's text (text layer or Tesseract); None: none could be had
    engine: str | None      # ia-ocr | tesseract | None
    reason: str | None      # None (text layer used) | no_text_layer | unusable_text_layer | ocr_* | no_page_image
    detail: str | None = None


def _dictionary_like(tok: str) -> bool:
    if len(tok) < 2 or not _WORD_RE.match(tok) or not _VOWEL_RE.search(tok):
        return False
    letters = tok.replace("'", "").replace("-", "")
    return letters.islower() or letters.isupper() or (letters[0].isupper() and letters[1:].islower())


def text_quality(text: str | None) -> TextQuality:
    """Token counts of ``text`` (see the module docstring for what counts)."""
    tokens = words = alpha = 0
    for raw in (text or "").split():
        tok = raw.strip(_STRIP)
        if not tok:
            continue
        tokens += 1
        if any(c.isdigit() for c in tok):
            continue
        alpha += 1
        words += _dictionary_like(tok)
    return TextQuality(tokens, words, alpha)


def unusable_reason(text: str | None, *, min_words: int = MIN_WORDS,
                    min_word_ratio: float = MIN_WORD_RATIO) -> str | None:
    """None when ``text`` is a usable text layer, else ``no_text_layer`` (None / blank) or
    ``unusable_text_layer`` (too few or too small a share of dictionary-like tokens)."""
    if text is None or not text.strip():
        return NO_TEXT_LAYER
    q = text_quality(text)
    if q.words < min_words or q.ratio < min_word_ratio:
        return UNUSABLE_TEXT_LAYER
    return None


@functools.lru_cache(maxsize=1)
def tesseract_version() -> str | None:
    """The installed Tesseract's version ("5.3.0"), or None when pytesseract or the binary is missing."""
    try:
        import pytesseract

        return str(pytesseract.get_tesseract_version())
    except Exception:  # noqa: BLE001 - ImportError, TesseractNotFoundError, a broken binary
        return None


def unavailable_detail() -> str:
    try:
        import pytesseract  # noqa: F401
    except ImportError:
        return "the pytesseract package is not installed"
    return "the tesseract binary is not installed or not on PATH (apt-get install tesseract-ocr tesseract-ocr-eng)"


def ocr_fingerprint(engine: str = ENGINE, lang: str = LANG) -> dict[str, object]:
    """What stands for the OCR engine in a stage's fingerprint (a newly installed Tesseract
    reruns the stages that could not OCR before)."""
    return {"engine": engine, "version": tesseract_version() if engine == ENGINE else None, "lang": lang,
            "psm": [PSM, PSM_CATALOG], "min_width": MIN_WIDTH}


def ocr_image(data: bytes | None, *, lang: str = LANG, psm: int = PSM, min_width: int = MIN_WIDTH) -> PageText:
    """Tesseract's text of one encoded page image (PNG, JPEG 2000, …), grey, enlarged when
    narrower than ``min_width``: ``engine='tesseract'``, or ``text=None`` with
    ``ocr_unavailable`` / ``no_page_image`` / ``ocr_failed``."""
    if not data:
        return PageText(None, None, NO_PAGE_IMAGE, "no page image for this page")
    if tesseract_version() is None:
        return PageText(None, None, OCR_UNAVAILABLE, unavailable_detail())
    try:
        import pytesseract
        from PIL import Image

        with Image.open(io.BytesIO(data)) as img:
            img.load()
            gray = img.convert("L")
        factor = min(3, -(-min_width // max(gray.width, 1))) if gray.width < min_width else 1
        if factor > 1:
            gray = gray.resize((gray.width * factor, gray.height * factor), Image.LANCZOS)
        text = pytesseract.image_to_string(gray, lang=lang, config=f"--psm {psm}")
    except Exception as exc:  # noqa: BLE001 - one unreadable image is a reason, never a crash
        return PageText(None, None, OCR_FAILED, f"{type(exc).__name__}: {str(exc) or repr(exc)}"[:300])
    return PageText(text, ENGINE, None)


def resolve_page_text(text: str | None, image: bytes | None, *, engine: str = ENGINE, lang: str = LANG,
                      min_words: int = MIN_WORDS, min_word_ratio: float = MIN_WORD_RATIO, psm: int = PSM) -> PageText:
    """The text of one page: its text layer when usable (``engine='ia-ocr'``, reason None); else
    Tesseract on ``image`` (``engine='tesseract'``, reason = why the layer was not used). When
    Tesseract cannot help (``engine='none'``, not installed, no image, failed) an unusable but
    non-empty layer is kept (``engine='ia-ocr'``) and a missing one gives ``text=None``; the
    reason is then the OCR failure's (``ocr_unavailable``, ``no_page_image``, ``ocr_failed``)."""
    why = unusable_reason(text, min_words=min_words, min_word_ratio=min_word_ratio)
    if why is None:
        return PageText(text, TEXT_LAYER_ENGINE, None)
    if engine != ENGINE:
        got = PageText(None, None, OCR_UNAVAILABLE, f"hollywood.ocr_engine = {engine!r}")
    else:
        got = ocr_image(image, lang=lang, psm=psm)
    if got.text is not None:
        return PageText(got.text, ENGINE, why, got.detail)
    keep = text if text and text.strip() else None
    return PageText(keep, TEXT_LAYER_ENGINE if keep is not None else None, got.reason,
                    f"{why}; {got.detail}" if got.detail else why)


# --------------------------------------------------------------------------------------------
# accuracy (benchmarks/bench_ocr.py, tests)
# --------------------------------------------------------------------------------------------
def _levenshtein(a: list[str] | str, b: list[str] | str) -> int:
    """Edit distance of two strings or two token lists (rapidfuzz, unit costs)."""
    from rapidfuzz.distance import Levenshtein

    return Levenshtein.distance(a, b)


def _norm(text: str) -> str:
    return " ".join(text.split())


def error_rates(reference: str, hypothesis: str) -> dict[str, float | int]:
    """Character and word error rates (edit distance / reference length) after whitespace is
    collapsed: ``cer``, ``wer``, ``ref_chars``, ``ref_words``, ``char_edits``, ``word_edits``."""
    ref, hyp = _norm(reference), _norm(hypothesis)
    ce, we = _levenshtein(ref, hyp), _levenshtein(ref.split(), hyp.split())
    return {"cer": ce / max(len(ref), 1), "wer": we / max(len(ref.split()), 1), "ref_chars": len(ref),
            "ref_words": len(ref.split()), "char_edits": ce, "word_edits": we}


def options_of(hs: object) -> dict[str, object]:
    """The :func:`resolve_page_text` keyword options of the Hollywood settings (``ocr_engine``,
    ``ocr_lang``, ``ocr_min_words``, ``ocr_min_word_ratio``; module defaults where absent)."""
    return {"engine": getattr(hs, "ocr_engine", ENGINE), "lang": getattr(hs, "ocr_lang", LANG),
            "min_words": getattr(hs, "ocr_min_words", MIN_WORDS),
            "min_word_ratio": getattr(hs, "ocr_min_word_ratio", MIN_WORD_RATIO)}
