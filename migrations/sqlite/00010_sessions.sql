-- Web sessions: see the Postgres migration of the same number for the
-- design. Times are Unix microseconds, as in the other tables.

-- +goose Up
CREATE TABLE web_sessions (
    hash       TEXT    PRIMARY KEY CHECK (length(hash) = 64),
    token_id   TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    seen_at    INTEGER NOT NULL
) STRICT;
CREATE INDEX web_sessions_created_at ON web_sessions (created_at);
CREATE INDEX web_sessions_seen_at ON web_sessions (seen_at);

-- +goose Down
DROP TABLE web_sessions;
