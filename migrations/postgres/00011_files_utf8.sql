-- Whether each file's body is valid UTF-8, found at ingest. npm diff
-- compares bodies as decoded text, so a name-only diff reads both bodies
-- of a changed file unless both are known valid (then different bytes are
-- different text): next 16.4.5 → 16.4.6's first name-only diff read 143
-- files' bodies to print their names. NULL for versions stored before
-- this migration: unknown, and read as before. Adding a nullable column
-- with no default rewrites no row.

-- +goose Up
ALTER TABLE files ADD COLUMN valid_utf8 boolean;

-- +goose Down
ALTER TABLE files DROP COLUMN valid_utf8;
