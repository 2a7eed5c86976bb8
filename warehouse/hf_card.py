"""Hugging Face dataset card (README.md) for a cinesub release.

What: ``render_card`` returns the card text — YAML front matter (licence, pretty name, languages,
task categories, size category, tags and one ``configs`` entry per Parquet table, ``films`` the
default) followed by a Markdown body: summary, structure (tables, rows, columns), splits, the
versioning rule and withdrawal policy (SPEC C), how to load the data with DuckDB / Polars /
``datasets``, citation and limitations.

Why: with ``configs`` in its front matter, ``datasets.load_dataset(<dir or repo>, name=<table>)``
loads each table from its Parquet file without a loading script, and the Hub renders the body as
the dataset's documentation.

The card is a pure function of its arguments (no clock), so identical releases give identical
bytes.
"""

from __future__ import annotations

from typing import Any, Mapping

import pyarrow as pa
import yaml

from cinesub.settings import LANGUAGE_NAMES
from warehouse.croissant import (
    COLUMN_DESCRIPTIONS,
    DEFAULT_RAI,
    LICENSE_URLS,
    TABLE_DESCRIPTIONS,
    TABLE_KEYS,
    VERSIONING_RULE,
    WITHDRAWAL_POLICY,
    default_cite_as,
)

TASK_CATEGORIES = ("text-generation", "text-classification", "summarization")
TAGS = ("subtitles", "films", "multilingual", "long-context", "content-rating", "croissant")

_SIZE_BUCKETS = (
    (1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M"),
    (10_000_000, "1M<n<10M"), (100_000_000, "10M<n<100M"), (1_000_000_000, "100M<n<1B"),
)


def size_category(n: int) -> str:
    """The Hub's size bucket for ``n`` examples."""
    for bound, label in _SIZE_BUCKETS:
        if n < bound:
            return label
    return "n>1B"


def hf_license(license: str) -> tuple[str, str | None]:
    """(Hub licence id, licence_link or None). URLs map back to a known id, else ``other``."""
    lowered = license.strip().lower()
    if lowered in LICENSE_URLS:
        return lowered, None
    for lid, url in LICENSE_URLS.items():
        if license.strip() == url:
            return lid, None
    if lowered.startswith(("http://", "https://")):
        return "other", license.strip()
    return lowered, None


def _front_matter(
    manifest: Mapping[str, Any], tables: list[str], license: str, pretty_name: str,
    languages: list[str],
) -> str:
    files = manifest.get("files") or {}
    lid, link = hf_license(license)
    n_films = (files.get("films.parquet") or {}).get("rows")
    meta: dict[str, Any] = {"license": lid}
    if link:
        meta["license_link"] = link
    meta["pretty_name"] = pretty_name
    meta["language"] = list(languages)
    meta["multilinguality"] = "multilingual"
    meta["task_categories"] = list(TASK_CATEGORIES)
    if isinstance(n_films, int):
        meta["size_categories"] = [size_category(n_films)]
    meta["tags"] = list(TAGS)
    configs = []
    for table in tables:
        cfg: dict[str, Any] = {
            "config_name": table,
            "data_files": [{"split": "train", "path": f"{table}.parquet"}],
        }
        if table == "films":
            cfg["default"] = True
        configs.append(cfg)
    meta["configs"] = configs
    return yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, default_flow_style=False, width=1000)


def _flatten(prefix: str, value: Any, out: list[tuple[str, str]]) -> None:
    if isinstance(value, Mapping):
        for k in sorted(value, key=str):
            _flatten(f"{prefix}.{k}" if prefix else str(k), value[k], out)
    elif isinstance(value, float):
        out.append((prefix, f"{value:.4g}"))
    elif isinstance(value, (list, tuple)):
        out.append((prefix, ", ".join(str(v) for v in value)))
    else:
        out.append((prefix, str(value)))


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else [str(v) for v in value]


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_card(
    manifest: dict,
    *,
    tables: list[str],
    stats: dict | None,
    license: str,
    version: str,
    pretty_name: str,
    table_schemas: Mapping[str, pa.Schema] | None = None,
    split_counts: Mapping[str, int] | None = None,
    url: str | None = None,
    languages: list[str] | None = None,
    rai: Mapping[str, Any] | None = None,
) -> str:
    """README.md text for the release. ``tables`` are the Parquet tables to expose as configs
    (in the given order); ``table_schemas`` (optional) lists their columns in the card;
    ``split_counts`` (e.g. {"public": 6, "heldback": 21}) or a ``split`` column in the films
    schema adds the note on the public / held-back split; ``stats`` (optional, any nested dict of
    numbers) is rendered as a sorted key/value table; ``rai`` overrides the default responsible-AI
    texts (as for ``build_croissant``) used in the limitations sections."""
    files = manifest.get("files") or {}
    name = manifest.get("name") or "cinesub"
    url = url or "https://example.org/cinesub"
    langs = list(languages) if languages else list(LANGUAGE_NAMES)
    schemas = dict(table_schemas or {})
    texts = {**DEFAULT_RAI, **{k.removeprefix("rai:"): v for k, v in (rai or {}).items()}}
    missing = [t for t in tables if f"{t}.parquet" not in files]
    if missing:
        raise ValueError(f"table_not_in_manifest: {', '.join(missing)}")

    out: list[str] = ["---\n", _front_matter(manifest, tables, license, pretty_name, langs), "---\n\n"]
    w = out.append
    w(f"# {pretty_name}\n\n")
    w(f"Version **{version}** of `{name}`: a multilingual subtitle benchmark corpus. Each film is "
      "resolved across review sites and IMDb by its IMDb title id and carries one verified, "
      f"sanitized subtitle track per language ({', '.join(f'{LANGUAGE_NAMES.get(c, c)} ({c})' for c in langs)}), "
      "national motion-picture ratings, language-safety gold labels and task references (plot, "
      "synopsis, storyline, key message, genres, age suitability).\n\n")
    if (manifest.get("inputs") or {}).get("sample_world"):
        w("**Synthetic data:** this release was built from the synthetic sample world (generated "
          "films, subtitles and reviews), not from real films; use it to exercise the pipeline and "
          "loaders, not as a benchmark.\n\n")
    if manifest.get("code_version") or manifest.get("config_hash"):
        w(f"Built by cinesub {manifest.get('code_version', '?')} "
          f"(config hash `{manifest.get('config_hash', '?')}`).\n\n")

    w("## Structure\n\n")
    w("| table | rows | key | description |\n|---|---:|---|---|\n")
    for t in tables:
        rows = (files.get(f"{t}.parquet") or {}).get("rows")
        key = " + ".join(TABLE_KEYS.get(t, ())) or "—"
        w(f"| `{t}` | {rows if rows is not None else '—'} | {key} | "
          f"{_md_cell(TABLE_DESCRIPTIONS.get(t, ''))} |\n")
    w("\n")
    if "films.jsonl" in files:
        w("`films.jsonl` holds one film entity per line (SPEC A11 field names), with every "
          "subtitle track inline.\n\n")
    if "stats/stages.parquet" in files:
        w("`stats/stages.parquet` holds per-stage statistics of the build that made this release "
          "(flow, stage, status, items in and out, items dropped by reason, seconds). It describes the "
          "build, not the data, and never decides whether a release is new.\n\n")
    if "task_references" in tables:
        w("`task_references` holds the benchmark targets of every film with the values of "
          "`films.jsonl` (`plot`, `synopsis`, `storyline`, `key_message` = `keyMessage`, `genres`, "
          "`topics`, `age_suitability` = `ageSuitabilityRating`, `full_cast` = `fullCast`, "
          "`countries_of_origin`, `original_languages`; lists are typed lists). A task field the "
          "completeness rule withheld is null for every film. Join it to the other tables on "
          "`imdb_id` (or `id`).\n\n")
    for t in tables:
        schema = schemas.get(t)
        if schema is None:
            continue
        w(f"### `{t}`\n\n| column | type | description |\n|---|---|---|\n")
        for field in schema:
            w(f"| `{field.name}` | {field.type} | {_md_cell(COLUMN_DESCRIPTIONS.get(field.name, ''))} |\n")
        w("\n")

    films_schema = schemas.get("films")
    has_split = bool(split_counts) or (films_schema is not None and "split" in films_schema.names)
    w("## Splits\n\n")
    w("Each table is exposed as one configuration with a single `train` split (the whole table).\n\n")
    if has_split:
        w("The `films` table has a `split` column: `public` marks the stratified public sample "
          "(every stratum has public and held-back films; share, strata and counts per stratum in "
          "manifest.json `splits`; fixed seed, frozen — a film keeps its split "
          "across versions) and `heldback` the held-back films. Filter on it (and join other "
          "tables on `imdb_id`) to use only the public sample; which part is published is "
          "decided at release time.")
        if split_counts:
            w(" Counts: " + ", ".join(f"{k}: {split_counts[k]}" for k in sorted(split_counts)) + ".")
        w("\n\n")

    if stats:
        flat: list[tuple[str, str]] = []
        _flatten("", stats, flat)
        w("## Statistics\n\n| statistic | value |\n|---|---:|\n")
        for k, v in flat:
            w(f"| {_md_cell(k)} | {_md_cell(v)} |\n")
        w("\n")

    w("## Versioning\n\n" + VERSIONING_RULE + "\n\n")
    w("## Withdrawal policy\n\n" + WITHDRAWAL_POLICY + "\n\n")

    first = tables[0] if tables else "films"
    w("## How to load\n\n")
    w("DuckDB:\n\n```python\nimport duckdb\n\n"
      f"duckdb.sql(\"SELECT * FROM read_parquet('{first}.parquet') LIMIT 5\").show()\n```\n\n")
    w("Polars:\n\n```python\nimport polars as pl\n\n"
      f"{first} = pl.read_parquet(\"{first}.parquet\")\n```\n\n")
    refs = (f"refs = load_dataset(\"path/to/{name}-{version}\", name=\"task_references\", split=\"train\")\n"
            if "task_references" in tables else "")
    w("Hugging Face `datasets` (a local copy of this directory or the Hub repository):\n\n"
      "```python\nfrom datasets import load_dataset\n\n"
      f"ds = load_dataset(\"path/to/{name}-{version}\", name=\"{first}\", split=\"train\")\n{refs}```\n\n")
    w("Croissant metadata (`croissant.json`, Croissant 1.0 with RAI fields) describes every "
      "file and table; load it with `mlcroissant.Dataset(jsonld=\"croissant.json\")`.\n\n")

    w("## Limitations\n\n")
    for item in _as_list(texts.get("dataLimitations")) + _as_list(texts.get("dataBiases")):
        w(f"- {item}\n")
    w("\n## Personal and sensitive information\n\n")
    for item in _as_list(texts.get("personalSensitiveInformation")):
        w(f"- {item}\n")
    lid, link = hf_license(license)
    w(f"\n## License\n\n`{lid}`" + (f" ({link})" if link else "") + ". Subtitle texts remain "
      "subject to the rights of their authors; use is limited to research.\n")
    w("\n## Citation\n\n```bibtex\n" + default_cite_as(name, version, url) + "\n```\n")
    return "".join(out)
