-- files_hash: files by body hash, for the blob collector and for the
-- foreign key check of each blob it deletes (see 00008). Built
-- CONCURRENTLY, so replicas still running the previous release keep
-- committing versions (SHARE UPDATE EXCLUSIVE on files, not SHARE) while a
-- large store indexes its files, and outside a transaction, which
-- CONCURRENTLY requires. The replica that migrates holds goose's lock
-- meanwhile; the others wait for it up to migration-lock-timeout.
--
-- A database that ran 00008 before it moved here has the index already:
-- IF NOT EXISTS leaves it. A concurrent build that failed (the process
-- stopped mid-build, a cancelled statement) leaves an INVALID index of
-- that name, which IF NOT EXISTS would take for done and the collector's
-- lookups would never use: it is dropped first (a plain DROP, whose
-- ACCESS EXCLUSIVE lock is held only to remove it) and built again.

-- +goose NO TRANSACTION

-- +goose Up
-- +goose StatementBegin
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_index WHERE indexrelid = to_regclass('files_hash') AND NOT indisvalid) THEN
        DROP INDEX files_hash;
    END IF;
END
$$;
-- +goose StatementEnd
CREATE INDEX CONCURRENTLY IF NOT EXISTS files_hash ON files (hash);

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS files_hash;
