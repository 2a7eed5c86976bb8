#!/usr/bin/env bash
# Idempotent setup: Debian packages (when root), a venv in .venv, Python packages pinned by
# requirements.lock. Called by `make setup`; every other make target depends on it.
set -euo pipefail
cd "$(dirname "$0")/.."
# chromium: headless browser for the flagged-track report test (Playwright drives /usr/bin/chromium;
# never `playwright install`); fonts-liberation so its screenshots have legible text;
# tesseract-ocr + tesseract-ocr-eng: the OCR engine (pytesseract, extractors/ocr_tesseract.py) for
# page images with no or unusable text layer (Variety pages, image-only CCE volumes)
APT_PACKAGES="poppler-utils chromium fonts-liberation tesseract-ocr tesseract-ocr-eng"
missing=""
for p in $APT_PACKAGES; do
  dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
  if [ "$(id -u)" = "0" ]; then
    echo "setup: apt-get install$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq --no-install-recommends $missing >/dev/null
  else
    echo "setup: WARNING: not root; please install Debian packages:$missing" >&2
  fi
fi
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
.venv/bin/python -m pip install -q -c requirements.lock -e '.[dev]'
.venv/bin/python scripts/provision_tokenizer.py
echo "setup: ok ($(.venv/bin/python --version))"
