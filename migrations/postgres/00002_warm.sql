-- Warm requests (internal/warm): a lockfile or a list of specs that someone
-- asked to have prewarmed, and the fate of each package in it. The jobs
-- themselves live in River's tables (river_job, created by rivermigrate at
-- start); these tables group them per request so that GET /v1/warm/{id}
-- and the indexer's summary can say what was warmed, what was already
-- there, what was skipped and what failed, and why.

-- +goose Up

-- id is 128 random bits in hex rather than a sequence: a request lists a
-- project's dependencies, and a guessable id would let anyone who can reach
-- the API enumerate other teams' lockfiles.
CREATE TABLE warm_requests (
    id         text        PRIMARY KEY CHECK (id ~ '^[0-9a-f]{32}$'),
    source     text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX warm_requests_created_at ON warm_requests (created_at);

-- warm_items has one row per package of a request, in the order the request
-- listed them (seq). version is the exact version once known (at once for a
-- lockfile, after resolution for a range or tag). job_id is the River job
-- that warms it: several items, of one request or of many, may share a job,
-- since River refuses a second job for the same package@version while one
-- is pending (unique jobs). bytes is the version's unpacked size.
CREATE TABLE warm_items (
    request_id text    NOT NULL REFERENCES warm_requests (id) ON DELETE CASCADE,
    seq        integer NOT NULL CHECK (seq >= 0),
    name       text    NOT NULL,
    spec       text    NOT NULL,
    version    text    NOT NULL DEFAULT '',
    state      text    NOT NULL CHECK (state IN ('pending', 'done', 'present', 'skipped', 'failed')),
    reason     text    NOT NULL DEFAULT '',
    job_id     bigint,
    bytes      bigint  NOT NULL DEFAULT 0 CHECK (bytes >= 0),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (request_id, seq)
);
-- A finishing job settles every pending item that waits on it.
CREATE INDEX warm_items_pending_job ON warm_items (job_id) WHERE state = 'pending';

-- ingest_format is the version of the extraction rules (internal/ingest,
-- internal/pkgpath) a version was stored under, so that `indexer reindex`
-- can find the versions stored under older rules and ingest them again
-- (warm.IngestFormat is the current one). Rows written before this column
-- existed were stored under format 1.
ALTER TABLE versions ADD COLUMN ingest_format integer NOT NULL DEFAULT 1 CHECK (ingest_format >= 0);
CREATE INDEX versions_ingest_format ON versions (ingest_format) WHERE state = 'ready';

-- +goose Down
DROP INDEX versions_ingest_format;
ALTER TABLE versions DROP COLUMN ingest_format;
DROP TABLE warm_items;
DROP TABLE warm_requests;
