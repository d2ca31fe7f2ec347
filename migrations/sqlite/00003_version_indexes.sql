-- Search indexes: one row per version and index format; see the Postgres
-- migration of the same number for the design.

-- +goose Up
CREATE TABLE version_indexes (
    version_id INTEGER NOT NULL REFERENCES versions (id) ON DELETE CASCADE,
    format     INTEGER NOT NULL CHECK (format > 0),
    size       INTEGER NOT NULL CHECK (size >= 0),
    chunks     BLOB    NOT NULL CHECK (length(chunks) % 32 = 0),
    coverage   REAL    NOT NULL,
    stats      TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (version_id, format)
) STRICT;

-- +goose Down
DROP TABLE version_indexes;
