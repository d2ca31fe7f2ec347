-- Initial schema; mirrors migrations/postgres/00001_init.sql, which explains
-- each table. Tables are STRICT so a string bound where a BLOB belongs (a
-- path or hash passed as TEXT, which would sort differently) is an error.
-- Times are unix microseconds, the precision Postgres timestamptz keeps.

-- +goose Up

-- blobs is a rowid table, not WITHOUT ROWID: bodies run to tens of MB and
-- SQLite advises against WITHOUT ROWID for rows over ~1/20 of a page.
CREATE TABLE blobs (
    hash  BLOB    NOT NULL PRIMARY KEY CHECK (length(hash) = 32),
    size  INTEGER NOT NULL CHECK (size >= 0),
    codec INTEGER NOT NULL CHECK (codec IN (0, 1)),
    data  BLOB    NOT NULL
) STRICT;

CREATE TABLE versions (
    id          INTEGER PRIMARY KEY,
    name        TEXT    NOT NULL,
    version     TEXT    NOT NULL,
    state       TEXT    NOT NULL CHECK (state IN ('ready', 'failed')),
    reason      TEXT    NOT NULL DEFAULT '',
    integrity   TEXT    NOT NULL DEFAULT '',
    file_count  INTEGER NOT NULL DEFAULT 0 CHECK (file_count >= 0),
    total_bytes INTEGER NOT NULL DEFAULT 0 CHECK (total_bytes >= 0),
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    UNIQUE (name, version)
) STRICT;

-- files rows are small (~60 bytes), so WITHOUT ROWID stores them in the
-- primary-key b-tree itself: a version's files sit together in path order
-- (BLOBs compare with memcmp) and Files is one range scan.
CREATE TABLE files (
    version_id INTEGER NOT NULL REFERENCES versions (id) ON DELETE CASCADE,
    path       BLOB    NOT NULL,
    hash       BLOB    NOT NULL REFERENCES blobs (hash),
    size       INTEGER NOT NULL CHECK (size >= 0),
    is_binary  INTEGER NOT NULL CHECK (is_binary IN (0, 1)),
    PRIMARY KEY (version_id, path)
) STRICT, WITHOUT ROWID;

-- +goose Down
DROP TABLE files;
DROP TABLE versions;
DROP TABLE blobs;
