-- Blob garbage collection: see the Postgres migration of the same number
-- for the design. One difference: the time a body was last written is
-- kept in a table of its own, blob_written, not in blobs. SQLite rewrites
-- a whole row to update one column, and reads all of it to do so: a re-put
-- refreshing a column of blobs would read every reused body's compressed
-- bytes, where a row of blob_written is 40 bytes. Every blobs row has one
-- (PutBlobs inserts both in one transaction; the backfill below covers the
-- bodies stored before), and it goes with its blob (ON DELETE CASCADE).
-- Times are unix microseconds. files_hash is built in 00009, as on
-- Postgres.

-- +goose Up
CREATE TABLE blob_written (
    hash       BLOB    NOT NULL PRIMARY KEY REFERENCES blobs (hash) ON DELETE CASCADE,
    written_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
INSERT INTO blob_written (hash, written_at)
SELECT hash, CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER) FROM blobs;

CREATE TABLE index_chunks (
    version_id INTEGER NOT NULL,
    format     INTEGER NOT NULL,
    hash       BLOB    NOT NULL REFERENCES blobs (hash),
    PRIMARY KEY (version_id, format, hash),
    FOREIGN KEY (version_id, format) REFERENCES version_indexes (version_id, format) ON DELETE CASCADE
) STRICT, WITHOUT ROWID;
CREATE INDEX index_chunks_hash ON index_chunks (hash);
WITH RECURSIVE c (version_id, format, chunks, i) AS (
    SELECT version_id, format, chunks, 0 FROM version_indexes WHERE length(chunks) >= 32
    UNION ALL
    SELECT version_id, format, chunks, i + 1 FROM c WHERE (i + 2) * 32 <= length(chunks)
)
INSERT OR IGNORE INTO index_chunks (version_id, format, hash)
SELECT version_id, format, substr(chunks, i * 32 + 1, 32) FROM c
WHERE EXISTS (SELECT 1 FROM blobs b WHERE b.hash = substr(c.chunks, c.i * 32 + 1, 32));

CREATE TABLE blob_gc (
    id        INTEGER PRIMARY KEY CHECK (id = 1),
    position  BLOB    NOT NULL DEFAULT X'',
    last_pass INTEGER NOT NULL DEFAULT 0
) STRICT;
INSERT INTO blob_gc (id) VALUES (1);

-- +goose Down
DROP TABLE blob_gc;
DROP TABLE index_chunks;
DROP TABLE blob_written;
