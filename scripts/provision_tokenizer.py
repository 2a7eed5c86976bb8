"""Put tiktoken's ``o200k_base`` BPE table (the tokenizer the paper counts input length with)
into ``<venv>/share/cinesub/tiktoken`` so statistics work offline.

tiktoken downloads its tables at first use from a host this project cannot reach. The PyPI
package ``litellm`` ships the same file (named by tiktoken's cache key) inside its wheel; we
download that wheel without dependencies, take the one file out and check it against the sha256
tiktoken itself expects, so a wrong or tampered file is refused. Idempotent; run by setup.sh.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

BLOB = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"  # tiktoken_ext.openai_public
CACHE_KEY = hashlib.sha1(BLOB.encode()).hexdigest()
WHEEL_MEMBER = f"litellm/litellm_core_utils/tokenizers/{CACHE_KEY}"


def cache_dir() -> Path:
    return Path(sys.prefix) / "share" / "cinesub" / "tiktoken"


def main() -> int:
    target = cache_dir() / CACHE_KEY
    if target.is_file() and hashlib.sha256(target.read_bytes()).hexdigest() == SHA256:
        print(f"tokenizer: o200k_base present ({target})")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
                        "-d", tmp, "litellm"], check=True)
        wheel = next(Path(tmp).glob("litellm-*.whl"))
        with zipfile.ZipFile(wheel) as zf:
            data = zf.read(WHEEL_MEMBER)
    digest = hashlib.sha256(data).hexdigest()
    if digest != SHA256:
        print(f"tokenizer: o200k_base from the wheel has sha256 {digest}, expected {SHA256}; refused",
              file=sys.stderr)
        return 1
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp_path = target.with_suffix(".tmp")
    tmp_path.write_bytes(data)
    tmp_path.replace(target)
    print(f"tokenizer: o200k_base installed ({target})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
