-- The registry's deprecation message of each version ("deprecated" in its
-- manifest), as it was when the version was stored, so an answer about a
-- stored version can say it is deprecated without asking the registry.
-- '' for versions that were not deprecated, and for versions stored
-- before this migration.

-- +goose Up
ALTER TABLE versions ADD COLUMN deprecated TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE versions DROP COLUMN deprecated;
