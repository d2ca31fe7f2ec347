-- Warm requests; mirrors migrations/postgres/00002_warm.sql, which explains
-- each table. Times are unix microseconds.

-- +goose Up

CREATE TABLE warm_requests (
    id         TEXT    NOT NULL PRIMARY KEY CHECK (length(id) = 32),
    source     TEXT    NOT NULL,
    created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX warm_requests_created_at ON warm_requests (created_at);

CREATE TABLE warm_items (
    request_id TEXT    NOT NULL REFERENCES warm_requests (id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL CHECK (seq >= 0),
    name       TEXT    NOT NULL,
    spec       TEXT    NOT NULL,
    version    TEXT    NOT NULL DEFAULT '',
    state      TEXT    NOT NULL CHECK (state IN ('pending', 'done', 'present', 'skipped', 'failed')),
    reason     TEXT    NOT NULL DEFAULT '',
    job_id     INTEGER,
    bytes      INTEGER NOT NULL DEFAULT 0 CHECK (bytes >= 0),
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (request_id, seq)
) STRICT, WITHOUT ROWID;
CREATE INDEX warm_items_pending_job ON warm_items (job_id) WHERE state = 'pending';

ALTER TABLE versions ADD COLUMN ingest_format INTEGER NOT NULL DEFAULT 1 CHECK (ingest_format >= 0);
CREATE INDEX versions_ingest_format ON versions (ingest_format) WHERE state = 'ready';

-- +goose Down
DROP INDEX versions_ingest_format;
ALTER TABLE versions DROP COLUMN ingest_format;
DROP TABLE warm_items;
DROP TABLE warm_requests;
