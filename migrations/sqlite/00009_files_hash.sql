-- files_hash: see the Postgres migration of the same number. SQLite has no
-- concurrent build (a writer holds the whole database anyway); the index
-- moved here from 00008 to keep the two directories in step, and IF NOT
-- EXISTS leaves the one a database built in 00008 before.

-- +goose Up
CREATE INDEX IF NOT EXISTS files_hash ON files (hash);

-- +goose Down
DROP INDEX IF EXISTS files_hash;
