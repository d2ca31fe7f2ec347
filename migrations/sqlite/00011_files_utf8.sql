-- Whether each file's body is valid UTF-8, found at ingest: see the
-- Postgres migration of the same number. NULL for versions stored before
-- it: unknown.

-- +goose Up
ALTER TABLE files ADD COLUMN valid_utf8 INTEGER CHECK (valid_utf8 IN (0, 1));

-- +goose Down
ALTER TABLE files DROP COLUMN valid_utf8;
