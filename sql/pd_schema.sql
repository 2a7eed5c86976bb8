-- The state database of the public-domain Hollywood flow (CINESUB_HOME/hollywood/state.duckdb;
-- flows/hollywood.py, docs/hollywood.md). Separate from the subtitle flow's state DB because
-- DuckDB admits one writer per file and the two flows may run side by side.
--
-- Stage outputs are replaced whole by the stage that writes them (each table has one writer);
-- the curated tables (pd_alias_decisions, pd_match_decisions) are written only by curators
-- (`cinesub hollywood review ...`) and are never cleared by a build.

-- One row per build invocation.
CREATE TABLE IF NOT EXISTS runs (
    run_id        VARCHAR PRIMARY KEY,
    started_at    TIMESTAMPTZ NOT NULL,
    finished_at   TIMESTAMPTZ,
    status        VARCHAR NOT NULL,          -- running | completed | failed | interrupted
    sample        BOOLEAN NOT NULL,
    config_hash   VARCHAR NOT NULL,
    code_version  VARCHAR NOT NULL,
    as_of         DATE NOT NULL,
    summary       JSON
);

-- Completion markers of the Stage framework (cinesub/stage.py), same shape as the subtitle DB's.
CREATE TABLE IF NOT EXISTS stage_runs (
    run_id        VARCHAR NOT NULL,
    stage         VARCHAR NOT NULL,
    fingerprint   VARCHAR NOT NULL,
    status        VARCHAR NOT NULL,          -- completed | reused | failed | incomplete
    started_at    TIMESTAMPTZ NOT NULL,
    finished_at   TIMESTAMPTZ,
    stats         JSON,
    PRIMARY KEY (run_id, stage)
);

-- ---------------------------------------------------------------------------------------------
-- Variety (SPEC B1)
-- ---------------------------------------------------------------------------------------------

-- Variety items found on the Internet Archive (one per month), with what could be fetched.
CREATE TABLE IF NOT EXISTS pd_variety_items (
    item_id        VARCHAR PRIMARY KEY,
    title          VARCHAR,
    date_start     VARCHAR,
    date_end       VARCHAR,
    n_pages        INTEGER,
    djvu_sha256    VARCHAR,                  -- raw store digest of {id}_djvu.txt (NULL: not fetched)
    images_source  VARCHAR,                  -- jp2.zip | pdf | NULL
    reason         VARCHAR                   -- NULL, or why the item could not be read (IA reason code)
);

-- One row per page (IA leaf) of a Variety item: provenance and the raw-store digests.
CREATE TABLE IF NOT EXISTS pd_pages (
    item_id            VARCHAR NOT NULL,
    page               INTEGER NOT NULL,     -- 0-based leaf index
    issue_date         DATE,
    issue_date_source  VARCHAR NOT NULL,     -- running_head | previous_page | item_date
    ocr_sha256         VARCHAR,              -- the page's OCR text in the raw store
    image_sha256       VARCHAR,              -- the page image (PNG) in the raw store
    text_engine        VARCHAR,              -- who produced ocr_sha256's text: ia-ocr | tesseract | NULL (none)
    text_reason        VARCHAR,              -- NULL (text layer used) | no_text_layer | unusable_text_layer | ocr_unavailable | no_page_image | ocr_failed
    PRIMARY KEY (item_id, page)
);

-- Page filter decisions (SPEC B1 page filter): every page, kept or not, with its reason.
CREATE TABLE IF NOT EXISTS pd_page_filter (
    item_id   VARCHAR NOT NULL,
    page      INTEGER NOT NULL,
    keep      BOOLEAN NOT NULL,
    reason    VARCHAR NOT NULL,              -- extractors/variety/page_filter.py reason codes
    phrase    VARCHAR,
    score     DOUBLE,
    PRIMARY KEY (item_id, page)
);

-- Extracted box-office tuples of both extractors, with provenance.
CREATE TABLE IF NOT EXISTS pd_tuples (
    item_id     VARCHAR NOT NULL,
    page        INTEGER NOT NULL,
    issue_date  DATE,
    extractor   VARCHAR NOT NULL,            -- gemini | ocr-rules
    model       VARCHAR,
    seq         INTEGER NOT NULL,            -- order of the tuple on its page
    theater     VARCHAR,
    city        VARCHAR,
    movie       VARCHAR,
    week        VARCHAR,
    gross       BIGINT,
    confidence  DOUBLE,
    line_no     INTEGER
);

-- What an extractor could not read: OCR-rules unparsed entries, Gemini page errors.
CREATE TABLE IF NOT EXISTS pd_extract_errors (
    item_id     VARCHAR NOT NULL,
    page        INTEGER NOT NULL,
    issue_date  DATE,
    extractor   VARCHAR NOT NULL,
    model       VARCHAR,
    reason      VARCHAR NOT NULL,
    detail      VARCHAR
);

-- Per kept page: agreement of the primary extractor with the cross-check extractor.
CREATE TABLE IF NOT EXISTS pd_crosscheck (
    item_id      VARCHAR NOT NULL,
    page         INTEGER NOT NULL,
    issue_date   DATE,
    primary_extractor   VARCHAR NOT NULL,
    secondary_extractor VARCHAR NOT NULL,
    n_primary    INTEGER NOT NULL,
    n_secondary  INTEGER NOT NULL,
    n_agree      INTEGER NOT NULL,           -- exact tuples in common (multiset)
    agreement    DOUBLE,                     -- 2·agree / (n_primary + n_secondary); NULL when both empty
    status       VARCHAR NOT NULL            -- agree | disagree | both_empty | secondary_missing
);

-- Curated alias decisions (year, alias as printed) → IMDb id, or NULL for "no IMDb record".
CREATE TABLE IF NOT EXISTS pd_alias_decisions (
    year        INTEGER NOT NULL,
    alias       VARCHAR NOT NULL,
    imdb        VARCHAR,
    decided_by  VARCHAR NOT NULL,
    decided_at  TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (year, alias)
);

-- Aliases of the primary extractor's tuples: resolved (seen >= min count, or curated).
CREATE TABLE IF NOT EXISTS pd_aliases (
    year        INTEGER NOT NULL,
    alias       VARCHAR NOT NULL,
    n           INTEGER NOT NULL,            -- occurrences in the year
    imdb        VARCHAR,
    title       VARCHAR,
    score       DOUBLE,
    decision    VARCHAR NOT NULL,            -- auto | review | none | curated
    reason      VARCHAR NOT NULL,            -- validators/variety_aliases.py reason codes
    decided_by  VARCHAR NOT NULL,            -- suggested | curated:<name>
    runner_up   VARCHAR,
    PRIMARY KEY (year, alias)
);

-- The catalog records the aliases point to (title and year of every suggested IMDb id).
CREATE TABLE IF NOT EXISTS pd_catalog_films (
    imdb   VARCHAR PRIMARY KEY,
    title  VARCHAR NOT NULL,
    year   INTEGER,
    votes  BIGINT
);

-- Results of warehouse/boxoffice.py (sql/boxoffice_weekly.sql, sql/boxoffice_yearly.sql).
CREATE TABLE IF NOT EXISTS pd_weekly (
    key VARCHAR, issue_date DATE, gross DOUBLE, key_kind VARCHAR, n_tuples BIGINT
);
CREATE TABLE IF NOT EXISTS pd_yearly (
    year INTEGER, rank BIGINT, key VARCHAR, key_kind VARCHAR, box_office DOUBLE, n_weeks BIGINT, n_tuples BIGINT
);
CREATE TABLE IF NOT EXISTS pd_top100 (
    year INTEGER, rank BIGINT, key VARCHAR, key_kind VARCHAR, box_office DOUBLE, n_weeks BIGINT, n_tuples BIGINT
);
CREATE TABLE IF NOT EXISTS pd_excluded (
    issue_date DATE, item_id VARCHAR, page INTEGER, extractor VARCHAR, model VARCHAR, theater VARCHAR,
    city VARCHAR, movie VARCHAR, week VARCHAR, gross BIGINT, city_normalized VARCHAR, country VARCHAR,
    key VARCHAR, reason VARCHAR
);
CREATE TABLE IF NOT EXISTS pd_unknown_cities (
    city VARCHAR, n_tuples BIGINT, n_last_week BIGINT, first_issue DATE, last_issue DATE
);

-- Extraction accuracy against gold pages (validators/boxoffice_eval.py), long format:
-- scope 'issue' = one metric of one issue; scope 'mean' = the average over issues with its CI.
CREATE TABLE IF NOT EXISTS pd_evaluation (
    extractor  VARCHAR NOT NULL,
    model      VARCHAR,
    scope      VARCHAR NOT NULL,             -- issue | mean
    issue      VARCHAR,
    metric     VARCHAR NOT NULL,             -- spearman | movie_f1 | tuple_f1 | *_precision | *_recall
    value      DOUBLE,
    ci_low     DOUBLE,
    ci_high    DOUBLE,
    n_issues   INTEGER,
    n_gold     INTEGER,
    n_pred     INTEGER,
    reason     VARCHAR                       -- why a value is NULL
);

-- ---------------------------------------------------------------------------------------------
-- Catalog of Copyright Entries (SPEC B2)
-- ---------------------------------------------------------------------------------------------

CREATE TABLE IF NOT EXISTS pd_cce_items (
    item_id        VARCHAR PRIMARY KEY,
    title          VARCHAR,
    context_year   INTEGER,                  -- year used to read two-digit years (last year a cumulative volume covers, else the volume's year)
    n_pages        INTEGER,
    djvu_sha256    VARCHAR,
    text_source    VARCHAR,                  -- djvu | pdf_images (no text layer) | NULL
    reason         VARCHAR
);

CREATE TABLE IF NOT EXISTS pd_cce_pages (
    item_id       VARCHAR NOT NULL,
    page          INTEGER NOT NULL,
    kind          VARCHAR NOT NULL,          -- registrations | renewals | image_only
    ocr_sha256    VARCHAR,                   -- the leaf's text (raw store); image_only: Tesseract's, else NULL
    image_sha256  VARCHAR,                   -- the page image (PNG, raw store) of every page, text layer or not
    text_engine   VARCHAR,                   -- who produced ocr_sha256's text: ia-ocr | tesseract | NULL (none)
    text_reason   VARCHAR,                   -- NULL (text layer used) | no_text_layer | unusable_text_layer | ocr_unavailable | no_page_image | ocr_failed
    PRIMARY KEY (item_id, page)
);

CREATE TABLE IF NOT EXISTS pd_registrations (
    source      VARCHAR NOT NULL,            -- cce:<item_id>
    item_id     VARCHAR,
    page        INTEGER,
    title       VARCHAR,
    reg_id      VARCHAR NOT NULL,            -- canonical when read with confidence, else as printed
    reg_date    DATE,
    claimant    VARCHAR,
    reg_raw     VARCHAR,
    confident   BOOLEAN NOT NULL,
    reasons     VARCHAR,
    extractor   VARCHAR                      -- ocr-rules (the OCR-text parser) | gemini (image_only pages)
);

CREATE TABLE IF NOT EXISTS pd_renewals (
    source        VARCHAR NOT NULL,          -- cce:<item_id> | cprs
    item_id       VARCHAR,
    page          INTEGER,
    title         VARCHAR,
    orig_reg_id   VARCHAR NOT NULL,
    orig_date     DATE,
    renewal_id    VARCHAR NOT NULL,
    renewal_date  DATE,
    claimant      VARCHAR,
    basis         VARCHAR,
    layout        VARCHAR,
    orig_reg_raw  VARCHAR,
    renewal_raw   VARCHAR,
    confident     BOOLEAN NOT NULL,
    reasons       VARCHAR,
    extractor     VARCHAR                    -- ocr-rules | gemini (image_only pages) | export (CPRS)
);

-- Every CCE entry / export row that could not be read, with its reason code.
CREATE TABLE IF NOT EXISTS pd_unparsed (
    source   VARCHAR NOT NULL,
    item_id  VARCHAR,
    page     INTEGER,
    kind     VARCHAR NOT NULL,               -- registration | renewal | export | page
    reason   VARCHAR NOT NULL,               -- the parser's code; gemini:<reason> for a page Gemini could not read
    raw      VARCHAR,
    detail   VARCHAR,
    extractor VARCHAR                        -- ocr-rules | gemini | export
);

-- Text pages read twice: the OCR-text parser (the source of record) against Gemini on the page
-- image (extractors.cce.gemini_pages.page_agreement: records keyed kind|reg_id|reg_date, film
-- classes only). One row per text page Gemini read; keys in ocr_only / gemini_only, renewal
-- numbers that differ in renewal_differs.
CREATE TABLE IF NOT EXISTS pd_cce_crosscheck (
    item_id          VARCHAR NOT NULL,
    page             INTEGER NOT NULL,
    kind             VARCHAR NOT NULL,       -- registrations | renewals (the page's kind)
    model            VARCHAR,
    n_ocr            INTEGER NOT NULL,
    n_gemini         INTEGER NOT NULL,
    matched          INTEGER NOT NULL,
    ocr_only         VARCHAR[],
    gemini_only      VARCHAR[],
    renewal_differs  VARCHAR[],
    agree            BOOLEAN NOT NULL
);

-- Columns added after the first schema (state DBs written before them get them here).
ALTER TABLE pd_registrations ADD COLUMN IF NOT EXISTS extractor VARCHAR;
ALTER TABLE pd_renewals ADD COLUMN IF NOT EXISTS extractor VARCHAR;
ALTER TABLE pd_unparsed ADD COLUMN IF NOT EXISTS extractor VARCHAR;

-- Curated match decisions (validators.copyright_match.CuratorDecision).
CREATE TABLE IF NOT EXISTS pd_match_decisions (
    reg_id      VARCHAR NOT NULL,
    reg_date    DATE NOT NULL,
    renewal_id  VARCHAR,
    decision    VARCHAR NOT NULL,            -- renewed | not_renewed
    decided_by  VARCHAR NOT NULL,
    decided_at  TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (reg_id, reg_date)
);

CREATE TABLE IF NOT EXISTS pd_matches (
    reg_id        VARCHAR NOT NULL,
    reg_date      DATE,
    title         VARCHAR,
    decision      VARCHAR NOT NULL,          -- validators.copyright_match.DECISIONS
    renewal_id    VARCHAR,
    renewal_date  DATE,
    n_candidates  INTEGER NOT NULL,
    candidates    VARCHAR,                   -- JSON list of {renewal_id, orig_reg_id, orig_date, title, score, reasons}
    reasons       VARCHAR,
    decided_by    VARCHAR,
    n_renewals_searched INTEGER NOT NULL
);

CREATE TABLE IF NOT EXISTS pd_status (
    reg_id          VARCHAR NOT NULL,
    reg_date        DATE,
    title           VARCHAR,
    status          VARCHAR NOT NULL,        -- public_domain | likely_public_domain | protected | needs_review
    rule            VARCHAR NOT NULL,
    reason          VARCHAR NOT NULL,
    renewal_id      VARCHAR,
    match_decision  VARCHAR,
    as_of           DATE NOT NULL
);

-- Source works of registered films (SPEC B2: AFI catalog "based on"; extractors/cce/source_works.py):
-- the rows the copyright-status stage passed to validators.copyright_status.classify (sample: the
-- CCE world's afi_based_on.tsv; live: hollywood.source_works_path). renewed NULL = unknown.
CREATE TABLE IF NOT EXISTS pd_source_works (
    film_reg_id    VARCHAR NOT NULL,         -- normalised as classify() reads it (the audit joins on it)
    film_reg_date  DATE,
    source_title   VARCHAR NOT NULL,
    renewed        BOOLEAN,
    renewal_id     VARCHAR,
    film_reg_id_raw VARCHAR                  -- the number as the input file gives it
);
ALTER TABLE pd_source_works ADD COLUMN IF NOT EXISTS film_reg_id_raw VARCHAR;

-- ---------------------------------------------------------------------------------------------
-- Collection (SPEC B2: top-100 ∩ (likely) public domain ∩ sound film on the Internet Archive)
-- ---------------------------------------------------------------------------------------------

-- Ranked film → its registration (title similarity and year), or why none.
CREATE TABLE IF NOT EXISTS pd_film_links (
    year        INTEGER NOT NULL,
    key         VARCHAR NOT NULL,
    title       VARCHAR,                     -- the catalog title (imdb keys) or the alias (title keys)
    film_year   INTEGER,
    reg_id      VARCHAR,
    reg_date    DATE,
    reg_title   VARCHAR,
    similarity  DOUBLE,
    reason      VARCHAR NOT NULL             -- linked | no_registration | ambiguous_registration
);

-- Ranked film → its Internet Archive film item (mediatype movies) and sound, or why none.
CREATE TABLE IF NOT EXISTS pd_film_ia (
    year       INTEGER NOT NULL,
    key        VARCHAR NOT NULL,
    query      VARCHAR,
    ia_item    VARCHAR,
    ia_title   VARCHAR,
    ia_year    INTEGER,
    sound      VARCHAR,                      -- sound | silent | NULL (unknown)
    reason     VARCHAR NOT NULL              -- found | not_on_ia | title_mismatch | search_failed:<code>
);

CREATE TABLE IF NOT EXISTS pd_collection_candidates (
    year INTEGER, rank BIGINT, key VARCHAR, key_kind VARCHAR, title VARCHAR, box_office DOUBLE,
    reg_id VARCHAR, reg_date DATE, link_reason VARCHAR, status VARCHAR, rule VARCHAR, status_reason VARCHAR,
    renewal_id VARCHAR, match_decision VARCHAR, n_renewals_searched INTEGER,
    ia_item VARCHAR, sound VARCHAR, ia_reason VARCHAR,
    popular BOOLEAN, copyright_ok BOOLEAN, ia_sound_ok BOOLEAN, included BOOLEAN, exclusion_reasons VARCHAR
);
-- issue 17.7 (sql/pd_collection.sql): verdict included | excluded | needs_review and why; status/rule
-- are the film's (R1_release_date: public domain by its release date), reg_* the registration's own
ALTER TABLE pd_collection_candidates ADD COLUMN IF NOT EXISTS verdict VARCHAR;
ALTER TABLE pd_collection_candidates ADD COLUMN IF NOT EXISTS review_reasons VARCHAR;
ALTER TABLE pd_collection_candidates ADD COLUMN IF NOT EXISTS reg_status VARCHAR;
ALTER TABLE pd_collection_candidates ADD COLUMN IF NOT EXISTS reg_rule VARCHAR;
ALTER TABLE pd_collection_candidates ADD COLUMN IF NOT EXISTS release_year INTEGER;
ALTER TABLE pd_collection_candidates ADD COLUMN IF NOT EXISTS release_year_source VARCHAR;
CREATE TABLE IF NOT EXISTS pd_collection (
    key VARCHAR, title VARCHAR, year INTEGER, rank BIGINT, box_office DOUBLE, reg_id VARCHAR, reg_date DATE,
    status VARCHAR, rule VARCHAR, status_reason VARCHAR, renewal_id VARCHAR, match_decision VARCHAR,
    n_renewals_searched INTEGER, ia_item VARCHAR, sound VARCHAR
);
CREATE TABLE IF NOT EXISTS pd_collection_audit (
    year INTEGER, key VARCHAR, criterion VARCHAR, passed BOOLEAN, evidence VARCHAR
);

-- Issue 17 (page-level Internet Archive access, incremental rebuilds): an item's fingerprint
-- (identifier@item_last_updated), where its page text came from and how its leaves align.
ALTER TABLE pd_variety_items ADD COLUMN IF NOT EXISTS fingerprint VARCHAR;       -- {id}@{item_last_updated}
ALTER TABLE pd_variety_items ADD COLUMN IF NOT EXISTS text_source VARCHAR;       -- hocr | djvu_xml | NULL
ALTER TABLE pd_variety_items ADD COLUMN IF NOT EXISTS alignment VARCHAR;         -- scandata | page_numbers | assumed
ALTER TABLE pd_variety_items ADD COLUMN IF NOT EXISTS alignment_reason VARCHAR;  -- NULL | leaf_page_mismatch | no_scan_data
ALTER TABLE pd_variety_items ADD COLUMN IF NOT EXISTS jp2_zip VARCHAR;           -- the _jp2.zip name from files[]
ALTER TABLE pd_pages ADD COLUMN IF NOT EXISTS leaf INTEGER;                      -- the image leaf (NNNN of the jp2 member)

-- Per-page state of a Variety page (variety-extract): kept | dropped (reason = the filter's) |
-- extracted | failed (reason = the first extract error); image_sha256 = the kept page's image as
-- fetched (one _jp2.zip member, fitted to the inline limit), NULL when not fetched.
CREATE TABLE IF NOT EXISTS pd_page_state (
    item_id       VARCHAR NOT NULL,
    page          INTEGER NOT NULL,
    leaf          INTEGER,
    state         VARCHAR NOT NULL,
    reason        VARCHAR,
    image_sha256  VARCHAR,
    fingerprint   VARCHAR,
    PRIMARY KEY (item_id, page)
);
