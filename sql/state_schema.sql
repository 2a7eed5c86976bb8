-- The working state database (CINESUB_HOME/state.duckdb). Documented in docs/ARCHITECTURE.md.
-- Every table is append-or-upsert; nothing that a curator or an audit needs is ever deleted.

-- One row per build invocation.
CREATE TABLE IF NOT EXISTS runs (
    run_id        VARCHAR PRIMARY KEY,
    started_at    TIMESTAMPTZ NOT NULL,
    finished_at   TIMESTAMPTZ,
    status        VARCHAR NOT NULL,          -- running | completed | failed | interrupted (died unfinished)
                                             -- | reused (nothing changed: the fast path, docs/rebuilds.md)
    sample        BOOLEAN NOT NULL,
    config_hash   VARCHAR NOT NULL,
    code_version  VARCHAR NOT NULL,
    summary       JSON
);

-- One row per stage execution (or reuse) within a run: the completion markers.
CREATE TABLE IF NOT EXISTS stage_runs (
    run_id        VARCHAR NOT NULL,
    stage         VARCHAR NOT NULL,
    fingerprint   VARCHAR NOT NULL,          -- hash of the stage's inputs, config and code version
    status        VARCHAR NOT NULL,          -- completed | reused | failed
    started_at    TIMESTAMPTZ NOT NULL,
    finished_at   TIMESTAMPTZ,
    stats         JSON,
    PRIMARY KEY (run_id, stage)
);

-- Raw source documents (review pages, datasets) read by the inventory stage.
CREATE TABLE IF NOT EXISTS sources (
    source        VARCHAR NOT NULL,          -- kim | csm | imdb_basics | imdb_ratings | imdb_title
    key           VARCHAR NOT NULL,          -- page id or dataset name
    url           VARCHAR,
    sha256        VARCHAR NOT NULL,          -- blob in the raw store
    fetched_at    TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (source, key)
);

-- One row per inventory film (KIM page), with what each source said and the resolution result.
CREATE TABLE IF NOT EXISTS films (
    kim_id           VARCHAR PRIMARY KEY,
    title            VARCHAR,
    year             INTEGER,
    kim_url          VARCHAR,
    kim_imdb_link    VARCHAR,
    imdb_id          VARCHAR,               -- canonical tt id or NULL
    imdb_id_status   VARCHAR NOT NULL,      -- ok | missing | malformed
    csm_id           VARCHAR,
    csm_url          VARCHAR,
    csm_imdb_id      VARCHAR,
    link_status      VARCHAR NOT NULL,      -- agree | disagree | no_csm | not_checked; a decided
                                            -- disagreement: accepted_kim | accepted_csm | rejected
    kim              JSON,                  -- KimRecord
    csm              JSON,                  -- CsmRecord
    imdb             JSON                   -- ImdbRecord (NULL when the id resolves to nothing)
);

-- Manual adjudication queue for entity links (SPEC A1 gate 3).
CREATE TABLE IF NOT EXISTS link_reviews (
    kim_id        VARCHAR PRIMARY KEY,
    kim_imdb_id   VARCHAR,
    csm_imdb_id   VARCHAR,
    csm_url       VARCHAR,
    reason        VARCHAR NOT NULL,
    decision      VARCHAR,                   -- the decision in force, applied by the last inventory:
                                             -- NULL (open) | accept_kim | accept_csm | reject
    decided_by    VARCHAR,
    decided_at    TIMESTAMPTZ
);

-- Curator decisions on entity links (history: never updated, only appended; the latest per
-- kim_id is in force, sql/link_decisions.sql). Written by `cinesub review decide-link`, applied
-- by the next build's inventory stage (films.imdb_id, films.link_status).
CREATE TABLE IF NOT EXISTS link_decisions (
    decision_id   VARCHAR PRIMARY KEY,       -- <UTC time>-<random>: orders like decided_at
    kim_id        VARCHAR NOT NULL,
    decision      VARCHAR NOT NULL,          -- accept_kim | accept_csm | reject
    kim_imdb_id   VARCHAR,                   -- the disagreement as it stood when decided
    csm_imdb_id   VARCHAR,
    note          VARCHAR NOT NULL,
    decided_by    VARCHAR NOT NULL,
    decided_at    TIMESTAMPTZ NOT NULL
);

-- Subtitle candidates offered by providers.
CREATE TABLE IF NOT EXISTS candidates (
    imdb_id            VARCHAR NOT NULL,
    language           VARCHAR NOT NULL,
    provider           VARCHAR NOT NULL,
    file_id            VARCHAR NOT NULL,
    download_count     BIGINT NOT NULL,
    rank               INTEGER NOT NULL,       -- 1 = highest download count
    uploader           VARCHAR,
    release            VARCHAR,
    fps                DOUBLE,
    hearing_impaired   BOOLEAN,
    machine_translated BOOLEAN,
    ai_translated      BOOLEAN,
    upload_date        VARCHAR,
    feature_imdb_id    VARCHAR,
    url                VARCHAR,
    PRIMARY KEY (imdb_id, language, provider, file_id)
);

-- Every download / processing attempt with its outcome and reason (the recovery chain).
CREATE TABLE IF NOT EXISTS attempts (
    run_id        VARCHAR NOT NULL,
    imdb_id       VARCHAR NOT NULL,
    language      VARCHAR NOT NULL,
    provider      VARCHAR NOT NULL,
    file_id       VARCHAR NOT NULL,
    attempt_no    INTEGER NOT NULL,
    sha256        VARCHAR,
    outcome       VARCHAR NOT NULL,          -- selected | rejected | flagged | download_failed | skipped_excluded
                                             -- | search_rejected (a provider entry that is no candidate:
                                             --   local_dir.REFUSAL_CODES; file_id '-' = the whole folder)
    reason        VARCHAR,                   -- reason codes, comma-separated
    attempted_at  TIMESTAMPTZ NOT NULL
);

-- One row per provider search (film, language, provider): when it was made and what it depended
-- on, so a rebuild does not ask again while it is fresh (providers.search_ttl_hours,
-- docs/rebuilds.md). The candidates it found are the `candidates` rows of that key.
CREATE TABLE IF NOT EXISTS search_cache (
    imdb_id       VARCHAR NOT NULL,
    language      VARCHAR NOT NULL,
    provider      VARCHAR NOT NULL,
    input_digest  VARCHAR,                   -- the environment's digest of what the answer depends on
                                             -- (sample: the film's world files; live: NULL, TTL only)
    searched_at   TIMESTAMPTZ NOT NULL,
    run_id        VARCHAR NOT NULL,
    n_candidates  INTEGER NOT NULL,
    n_refused     INTEGER NOT NULL,          -- entries refused at search (attempts search_rejected)
    PRIMARY KEY (imdb_id, language, provider)
);

-- Downloaded candidate files and their provenance (the bytes live in the raw store under
-- raw/sha256/ab/cd/<sha256>; several candidates may share one blob).
CREATE TABLE IF NOT EXISTS blobs (
    provider      VARCHAR NOT NULL,
    file_id       VARCHAR NOT NULL,
    sha256        VARCHAR NOT NULL,
    size          BIGINT NOT NULL,
    url           VARCHAR,
    language      VARCHAR,
    imdb_id       VARCHAR,
    download_count BIGINT,
    fetched_at    TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (provider, file_id)
);

-- One row per processed candidate file (a track), keyed by raw bytes + processing version.
CREATE TABLE IF NOT EXISTS tracks (
    track_id      VARCHAR PRIMARY KEY,       -- sha256(raw sha256 | language | runtime | processing version)
    imdb_id       VARCHAR NOT NULL,
    language      VARCHAR NOT NULL,
    provider      VARCHAR NOT NULL,
    file_id       VARCHAR NOT NULL,
    raw_sha256    VARCHAR NOT NULL,
    download_count BIGINT,
    encoding      VARCHAR,
    decoder       VARCHAR,
    status        VARCHAR NOT NULL,          -- ok | flagged | rejected (reason internal_error: processing raised)
    reasons       VARCHAR,                   -- reason codes of stop/review flags, comma-separated
    n_entries     INTEGER,
    n_repairs     INTEGER,
    first_start_ms BIGINT,
    last_end_ms   BIGINT,
    n_tokens      BIGINT,
    runtime_min   INTEGER,                   -- the IMDb runtime the checks used
    processing_version VARCHAR NOT NULL,
    processed_at  TIMESTAMPTZ NOT NULL
);

-- Parsed entries of every processed track (original text; sanitized text lives beside it).
-- Keyed by the entry's place in the file: the SRT index is kept exactly as found (never
-- renumbered), so a track whose indices repeat (layer index_duplicate) is stored whole.
-- (State DBs written before `position` are rebuilt with it by cinesub/state.py.)
-- (track_id, position) is unique by construction, not by an index: the process stage writes a
-- track's entries only in the transaction that writes its `tracks` row (whose PRIMARY KEY holds),
-- after deleting the rows of a track processed again, and a track's positions are 0..n-1. No
-- PRIMARY KEY: its ART index made every insert of the coordinator dearer (1.4x CPU at 2M rows,
-- growing with the table; issue 18) and held memory in proportion to all entries. cinesub.state.entry_key_duplicates audits it (release publication and
-- tests); state DBs written with the key are rebuilt without it by cinesub/state.py.
CREATE TABLE IF NOT EXISTS entries (
    track_id      VARCHAR NOT NULL,
    position      BIGINT NOT NULL,           -- 0-based ordinal of the entry in the file
    "index"       BIGINT NOT NULL,           -- the SRT index as found (may repeat)
    timeframe     VARCHAR NOT NULL,
    start_ms      BIGINT NOT NULL,
    end_ms        BIGINT NOT NULL,
    content       VARCHAR NOT NULL,
    clean_content VARCHAR                    -- NULL = removed by sanitization
);

-- Duration audit (validators/duration_audit.py, cohort stage): o200k_base token counts of
-- prompt-formatted tracks, keyed by the sha256 of the counted text, so an unchanged track is
-- never tokenised twice.
CREATE TABLE IF NOT EXISTS token_counts (
    text_sha256   VARCHAR NOT NULL,
    encoding      VARCHAR NOT NULL,
    n_tokens      BIGINT NOT NULL,
    PRIMARY KEY (text_sha256, encoding)
);

CREATE TABLE IF NOT EXISTS flags (
    track_id      VARCHAR NOT NULL,
    imdb_id       VARCHAR NOT NULL,
    language      VARCHAR NOT NULL,
    provider      VARCHAR NOT NULL,
    file_id       VARCHAR NOT NULL,
    layer         VARCHAR NOT NULL,
    severity      VARCHAR NOT NULL,          -- stop | review
    value         DOUBLE,
    threshold     DOUBLE,
    detail        VARCHAR,
    evidence      JSON
);

-- Curator decisions on tracks (history: never updated, only appended).
CREATE TABLE IF NOT EXISTS decisions (
    decision_id   VARCHAR PRIMARY KEY,
    track_id      VARCHAR NOT NULL,
    imdb_id       VARCHAR NOT NULL,
    language      VARCHAR NOT NULL,
    action        VARCHAR NOT NULL,          -- retain | repair | replace | exclude
    note          VARCHAR NOT NULL,
    decided_by    VARCHAR NOT NULL,
    decided_at    TIMESTAMPTZ NOT NULL
);

CREATE TABLE IF NOT EXISTS sanitization_log (
    track_id      VARCHAR NOT NULL,
    imdb_id       VARCHAR NOT NULL,
    language      VARCHAR NOT NULL,
    "index"       BIGINT NOT NULL,
    action        VARCHAR NOT NULL,          -- removed | modified
    reasons       VARCHAR NOT NULL,
    sha256        VARCHAR NOT NULL,          -- hash of the removed/replaced text, never the text
    position      BIGINT                     -- the entry acted on: entries.position (its "index"
                                             -- may repeat); NULL only for a row migrated from an
                                             -- older state DB whose entry is gone
);

-- The selected track per film and language for the current build.
CREATE TABLE IF NOT EXISTS selections (
    imdb_id       VARCHAR NOT NULL,
    language      VARCHAR NOT NULL,
    track_id      VARCHAR,                   -- NULL = no usable track
    file_id       VARCHAR,
    provider      VARCHAR,
    download_count BIGINT,
    status        VARCHAR NOT NULL,          -- ok | flagged | retained | missing | excluded
    reason        VARCHAR,
    PRIMARY KEY (imdb_id, language)
);

-- Funnel (SPEC A1): one row per gate per run.
CREATE TABLE IF NOT EXISTS funnel (
    gate_no       INTEGER PRIMARY KEY,
    gate          VARCHAR NOT NULL,
    kept          BIGINT NOT NULL,
    dropped       BIGINT NOT NULL,
    reasons       JSON                       -- {reason code: count}
);

-- Per-film gate outcome (why each film left the funnel, or made the cohort).
CREATE TABLE IF NOT EXISTS film_gates (
    kim_id        VARCHAR PRIMARY KEY,
    imdb_id       VARCHAR,
    dropped_at    INTEGER,                   -- gate_no, NULL = in the cohort
    reason        VARCHAR,                   -- reason code
    detail        VARCHAR                    -- e.g. the missing languages or countries
);

-- Normalised national ratings (SPEC A8) and raw strings that map to nothing.
CREATE TABLE IF NOT EXISTS ratings (
    imdb_id       VARCHAR NOT NULL,
    country       VARCHAR NOT NULL,
    label         VARCHAR NOT NULL,
    minimum_age   INTEGER NOT NULL,
    ordinal       INTEGER NOT NULL,
    raw           VARCHAR NOT NULL,
    rule          VARCHAR NOT NULL,
    PRIMARY KEY (imdb_id, country)
);

CREATE TABLE IF NOT EXISTS unmapped_ratings (
    imdb_id       VARCHAR NOT NULL,
    raw           VARCHAR NOT NULL,
    reason        VARCHAR NOT NULL
);

-- Language-safety annotation of the selected English track (SPEC A9).
CREATE TABLE IF NOT EXISTS language_safety (
    imdb_id       VARCHAR NOT NULL,
    track_id      VARCHAR NOT NULL,
    category      VARCHAR NOT NULL,
    occurrence_count     INTEGER NOT NULL,
    evidence_line_count  INTEGER NOT NULL,
    evidence_indices     JSON NOT NULL,
    PRIMARY KEY (imdb_id, category)
);

-- Complete-coverage optimisation (SPEC A7): per dimension and K, the exact search optimum and
-- the frequency-prefix baseline, over the films that pass gates 2-4.
CREATE TABLE IF NOT EXISTS coverage (
    dimension     VARCHAR NOT NULL,          -- languages | countries
    k             INTEGER NOT NULL,
    method        VARCHAR NOT NULL,          -- search | prefix
    attributes    VARCHAR,                   -- comma-separated, sorted
    films         BIGINT,
    score         BIGINT,
    PRIMARY KEY (dimension, k, method)
);

-- The selection run by the build (SPEC A7, stage `survey`, docs/coverage.md "Selection run by
-- the build"). availability: what a search-only query to the primary provider lists per film
-- past gate 4 and language (items = subtitle items listed, 0 included; NULL with status
-- search_failed and a reason when the film's search failed, never a silent gap).
CREATE TABLE IF NOT EXISTS availability (
    imdb_id       VARCHAR NOT NULL,
    language      VARCHAR NOT NULL,
    items         INTEGER,
    provider      VARCHAR NOT NULL,
    status        VARCHAR NOT NULL,          -- ok | truncated | search_failed
    reason        VARCHAR,                   -- "<reason code>: <detail>" when not ok
    PRIMARY KEY (imdb_id, language)
);

-- The chosen sets: one row per dimension and chosen attribute, in release order.
CREATE TABLE IF NOT EXISTS selected_attributes (
    dimension     VARCHAR NOT NULL,          -- languages | countries
    attribute     VARCHAR NOT NULL,
    position      INTEGER NOT NULL,          -- 1-based, the release order
    mode          VARCHAR NOT NULL,          -- survey | fixed | survey_label_space
    PRIMARY KEY (dimension, attribute)
);

-- The survey's per-K table: exact search optimum and frequency prefix for every K.
CREATE TABLE IF NOT EXISTS selection_per_k (
    dimension     VARCHAR NOT NULL,          -- languages | countries
    k             INTEGER NOT NULL,
    method        VARCHAR NOT NULL,          -- search | prefix
    attributes    VARCHAR,                   -- comma-separated, sorted; NULL when infeasible
    films         BIGINT,
    score         BIGINT,
    PRIMARY KEY (dimension, k, method)
);

-- Kids-in-Mind reference vs subtitle counts (SPEC A9), per cohort film and category; never forced
-- to agree. kim_count/difference NULL when the film has no KIM language summary. Diagnostic.
CREATE TABLE IF NOT EXISTS safety_discrepancies (
    imdb_id          VARCHAR NOT NULL,
    track_id         VARCHAR NOT NULL,
    category         VARCHAR NOT NULL,
    subtitle_count   INTEGER NOT NULL,
    kim_count        INTEGER,
    difference       INTEGER,
    large            BOOLEAN NOT NULL,
    sample_evidence_indices JSON NOT NULL,
    PRIMARY KEY (imdb_id, category)
);

-- Matched spans behind language_safety (diagnostic; NOT part of the public release).
CREATE TABLE IF NOT EXISTS safety_matches (
    imdb_id       VARCHAR NOT NULL,
    track_id      VARCHAR NOT NULL,
    "index"       INTEGER NOT NULL,          -- original subtitle index
    category      VARCHAR NOT NULL,
    span          VARCHAR NOT NULL,
    rule          VARCHAR NOT NULL,          -- lexicon rule id
    start_pos     INTEGER NOT NULL,          -- offsets in the cleaned entry text
    end_pos       INTEGER NOT NULL
);

-- SPEC A10 task-reference curation: raw and cleaned plot/synopsis/storyline per cohort film
-- (raw kept for traceability), and the completeness rule per task field.
CREATE TABLE IF NOT EXISTS curation (
    imdb_id       VARCHAR NOT NULL,
    field         VARCHAR NOT NULL,
    raw           VARCHAR,
    raw_sha256    VARCHAR NOT NULL,
    clean         VARCHAR,
    status        VARCHAR NOT NULL,          -- missing | unchanged | cleaned | emptied
    removed       JSON NOT NULL,             -- [{span, text, rule, category, reason}]
    method        VARCHAR NOT NULL,          -- rules | rules+gemini
    rules_version VARCHAR NOT NULL,
    gemini_error  VARCHAR,                   -- reason code when the Gemini pass failed (rules stand)
    PRIMARY KEY (imdb_id, field)
);

CREATE TABLE IF NOT EXISTS task_fields (
    field         VARCHAR PRIMARY KEY,
    kept          BOOLEAN NOT NULL,
    present       INTEGER NOT NULL,
    total         INTEGER NOT NULL,
    missing       JSON NOT NULL              -- imdb ids of cohort films lacking the field
);

-- Genres in the core genre space (seed 000 Table 13; validators/genres.py, docs/genres.md):
-- every raw genre of a cohort film as the source gave it, beside the core genres it maps to
-- under the versioned mapping. Written by the curate stage.
CREATE TABLE IF NOT EXISTS film_genres (
    imdb_id       VARCHAR NOT NULL,
    source        VARCHAR NOT NULL,          -- imdb | csm | kim
    position      INTEGER NOT NULL,          -- order in the source's list
    raw_genre     VARCHAR NOT NULL,          -- as found, never modified
    core_genres   VARCHAR[] NOT NULL,        -- empty unless mapped
    status        VARCHAR NOT NULL,          -- mapped | outside_core | unmapped
    mapping_version VARCHAR NOT NULL,
    PRIMARY KEY (imdb_id, source, position)
);

-- The curator's queue of raw genres the mapping does not list (never guessed): one row per
-- (source, raw genre) of the current cohort, rewritten by each curate run. Resolved by adding
-- the string to a new mapping version (validators/data/genre_map_v*.json) or, per film, by
-- `cinesub review fill FILM genres --value ...`.
CREATE TABLE IF NOT EXISTS genre_reviews (
    source        VARCHAR NOT NULL,
    raw_genre     VARCHAR NOT NULL,
    films         INTEGER NOT NULL,          -- cohort films carrying it
    example_imdb_id VARCHAR NOT NULL,
    mapping_version VARCHAR NOT NULL,
    PRIMARY KEY (source, raw_genre)
);

-- Task values supplied by a curator (`cinesub review fill FILM FIELD`; docs/review.md): history,
-- never updated, only appended; the latest per (imdb_id, field) is in force. The next build's
-- curate stage uses it where the sources leave the field missing for that film.
CREATE TABLE IF NOT EXISTS curated_values (
    fill_id       VARCHAR PRIMARY KEY,       -- <UTC time>-<random>: orders like filled_at
    imdb_id       VARCHAR NOT NULL,
    field         VARCHAR NOT NULL,          -- a task field (settings curation.task_fields)
    value         JSON NOT NULL,             -- a string, or a list of core genres for `genres`
    source_file   VARCHAR,                   -- the --file it was read from, if any
    filled_by     VARCHAR NOT NULL,
    filled_at     TIMESTAMPTZ NOT NULL
);

-- Per cohort film and task field, what the curate stage found missing in the sources: filled by
-- a curated value (fill_id) or still missing, with a reason code (docs/review.md). Rewritten by
-- each curate run; a film-field absent here had its value from the sources.
CREATE TABLE IF NOT EXISTS task_gaps (
    imdb_id       VARCHAR NOT NULL,
    field         VARCHAR NOT NULL,
    status        VARCHAR NOT NULL,          -- filled | missing
    reason        VARCHAR NOT NULL,          -- source_missing | emptied_by_curation | genres_no_core_label
    fill_id       VARCHAR,                   -- curated_values row used (status filled)
    value         JSON,                      -- the value used (status filled)
    PRIMARY KEY (imdb_id, field)
);

-- Release registries (SPEC A11, C). They outlive any one release: a film's id and split are
-- assigned once and never change or get reused; publish() also re-seeds them from the latest
-- release and the withdrawal log, so a lost state DB cannot renumber films.
CREATE TABLE IF NOT EXISTS film_ids (
    imdb_id       VARCHAR PRIMARY KEY,
    id            BIGINT NOT NULL UNIQUE,    -- sequential in order of first release, never reused
    first_version VARCHAR                    -- the release that first carried the film
);

CREATE TABLE IF NOT EXISTS splits (
    imdb_id       VARCHAR PRIMARY KEY,
    stratum       VARCHAR NOT NULL,          -- stratum when first assigned (frozen)
    split         VARCHAR NOT NULL,          -- public | heldback
    assigned_seed BIGINT NOT NULL
);

-- Removal on request (SPEC C): the film is left out of every later release; the log is also
-- appended to releases/withdrawals.jsonl.
CREATE TABLE IF NOT EXISTS withdrawals (
    imdb_id       VARCHAR PRIMARY KEY,
    reason        VARCHAR NOT NULL,
    requested_by  VARCHAR,
    requested_at  TIMESTAMP NOT NULL,
    release_version VARCHAR                  -- the release that first omitted the film
);

-- Source pages (review pages, IMDb title pages) the inventory could not read: one row per page
-- whose reading or parsing raised; the other pages are parsed as usual (issue 14 point 1).
CREATE TABLE IF NOT EXISTS source_errors (
    source        VARCHAR NOT NULL,          -- kim | csm | imdb_title
    key           VARCHAR NOT NULL,          -- page id (KIM/CSM page stem, IMDb id)
    sha256        VARCHAR,                   -- the page's bytes in the raw store
    reason        VARCHAR NOT NULL,          -- internal_error
    error_type    VARCHAR NOT NULL,          -- the exception's type name
    detail        VARCHAR,                   -- a short message
    PRIMARY KEY (source, key)
);

-- Columns added after the first schema (state DBs written before them get them here).
-- A track whose processing raised (reason internal_error): the exception type and a short
-- "<step>: <message>" detail; NULL for every other track.
ALTER TABLE tracks ADD COLUMN IF NOT EXISTS error_type VARCHAR;
ALTER TABLE tracks ADD COLUMN IF NOT EXISTS error_detail VARCHAR;
-- The sanitized entry's place in the file (see sanitization_log.position).
ALTER TABLE sanitization_log ADD COLUMN IF NOT EXISTS position BIGINT;
