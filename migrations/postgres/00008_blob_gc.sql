-- Blob garbage collection (store.BlobCollector). A body is garbage when no
-- file row and no stored index names it and nothing has written it for the
-- collector's grace period; three things make that decidable:
--
-- written_at is when PutBlobs last wrote or re-put the body (a re-put of a
-- stored body refreshes it, so an ingest that reuses an old body protects
-- it until its commit). now() is stable, so ADD COLUMN stores it once as
-- the default of every existing row without rewriting the table: bodies
-- stored before this migration are a grace period young. Refreshing it
-- writes a new main tuple (the body is out of line and not copied, but the
-- full pages of blobs rarely allow a HOT update, so the primary key gets
-- an entry too): PutBlobs does it only once the time is older than half
-- the grace (postgres.Options.BlobRefreshAfter).
--
-- index_chunks lists the blobs each stored index is made of, one row per
-- distinct chunk, with foreign keys both ways: deleting a chunk a stored
-- index names fails, as deleting a file's body does, and an index row
-- takes its chunk rows with it when it is replaced or its version reset.
-- version_indexes.chunks keeps the order; this table is only for lookups
-- by hash.
--
-- files_hash lets the collector (and the foreign key check of each blob
-- it deletes) find a body's files by hash; 00001 deferred it until then.
-- Commits pay one more index entry per file. It was built here, in this
-- migration's transaction, which held a SHARE lock on files (no commits)
-- and the ALTER TABLE's ACCESS EXCLUSIVE lock on blobs (no reads) for the
-- whole build: minutes on a large store. 00009 builds it CONCURRENTLY
-- instead, outside a transaction; databases that ran this migration
-- before keep the index they built, which 00009 finds and leaves alone.
--
-- blob_gc is the collector's one row of shared state: where the last pass
-- stopped in hash order, and when it ran. A pass locks the row (SKIP
-- LOCKED), so of several replicas one runs a pass at a time, and they
-- share one schedule and one position.

-- +goose Up
ALTER TABLE blobs ADD COLUMN written_at timestamptz NOT NULL DEFAULT now();

CREATE TABLE index_chunks (
    version_id bigint  NOT NULL,
    format     integer NOT NULL,
    hash       bytea   NOT NULL REFERENCES blobs (hash),
    PRIMARY KEY (version_id, format, hash),
    FOREIGN KEY (version_id, format) REFERENCES version_indexes (version_id, format) ON DELETE CASCADE
);
CREATE INDEX index_chunks_hash ON index_chunks (hash);
INSERT INTO index_chunks (version_id, format, hash)
SELECT DISTINCT i.version_id, i.format, substring(i.chunks FROM g * 32 + 1 FOR 32)
FROM version_indexes i, generate_series(0, octet_length(i.chunks) / 32 - 1) AS g
WHERE EXISTS (SELECT 1 FROM blobs b WHERE b.hash = substring(i.chunks FROM g * 32 + 1 FOR 32));

CREATE TABLE blob_gc (
    id        integer     PRIMARY KEY CHECK (id = 1),
    position  bytea       NOT NULL DEFAULT '',
    last_pass timestamptz NOT NULL DEFAULT '-infinity'
);
INSERT INTO blob_gc (id) VALUES (1);

-- +goose Down
DROP TABLE blob_gc;
DROP TABLE index_chunks;
ALTER TABLE blobs DROP COLUMN written_at;
