-- Web sessions (internal/session): a login keeps a random id in the
-- browser's cookie and only its SHA-256 here, so a copy of this table logs
-- no one in and the cookie is never an API token. token_id is the token's
-- public id (auth.Token.ID), through which the session takes the token's
-- identity and scopes. Kept in the store so that every replica shares them.

-- +goose Up
CREATE TABLE web_sessions (
    hash       text        PRIMARY KEY CHECK (hash ~ '^[0-9a-f]{64}$'),
    token_id   text        NOT NULL,
    created_at timestamptz NOT NULL,
    seen_at    timestamptz NOT NULL
);
CREATE INDEX web_sessions_created_at ON web_sessions (created_at);
CREATE INDEX web_sessions_seen_at ON web_sessions (seen_at);

-- +goose Down
DROP TABLE web_sessions;
