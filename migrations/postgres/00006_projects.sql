-- Projects (internal/project): a registered lockfile's node_modules tree,
-- which explore_npm serves as one filesystem. id is the sha256 of what was
-- registered (lockfile name and bytes, manifests), so registering again is
-- one primary-key lookup and every replica agrees on the id. The tree is
-- kept as one JSON document: it is always read whole (a 2,000-package
-- project is about 250 KB), never queried by package.

-- +goose Up
CREATE TABLE projects (
    id         text        PRIMARY KEY CHECK (id ~ '^[0-9a-f]{64}$'),
    format     text        NOT NULL,
    packages   integer     NOT NULL CHECK (packages >= 0),
    tree       text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE projects;
