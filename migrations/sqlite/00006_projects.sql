-- Projects: see the Postgres migration of the same number for the design.

-- +goose Up
CREATE TABLE projects (
    id         TEXT    PRIMARY KEY CHECK (length(id) = 64),
    format     TEXT    NOT NULL,
    packages   INTEGER NOT NULL CHECK (packages >= 0),
    tree       TEXT    NOT NULL,
    created_at INTEGER NOT NULL
) STRICT;

-- +goose Down
DROP TABLE projects;
