-- Initial schema: content-addressed blobs, versions, and each version's file
-- list. Bodies live once in blobs however many versions share them; files
-- points at them by hash.

-- +goose Up

-- blobs holds file bodies keyed by sha256. codec 0 = raw, 1 = zstd (see
-- internal/store/blobcodec); size is the uncompressed length.
CREATE TABLE blobs (
    hash  bytea    PRIMARY KEY CHECK (octet_length(hash) = 32),
    size  bigint   NOT NULL CHECK (size >= 0),
    codec smallint NOT NULL CHECK (codec IN (0, 1)),
    data  bytea    NOT NULL
);
-- Bodies are zstd-compressed already (or were not worth compressing), so
-- TOAST's own pglz pass would only burn CPU: store out of line, uncompressed.
ALTER TABLE blobs ALTER COLUMN data SET STORAGE EXTERNAL;

-- versions has one row per name@version ever attempted. created_at is when
-- it was first recorded (a failed attempt, if any); updated_at when its
-- state or reason last changed. id is a surrogate
-- key so that files (and later per-version search indexes) refer to a
-- version by 8 bytes rather than by its name and version strings.
CREATE TABLE versions (
    id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name        text        NOT NULL,
    version     text        NOT NULL,
    state       text        NOT NULL CHECK (state IN ('ready', 'failed')),
    reason      text        NOT NULL DEFAULT '',
    integrity   text        NOT NULL DEFAULT '',
    file_count  integer     NOT NULL DEFAULT 0 CHECK (file_count >= 0),
    total_bytes bigint      NOT NULL DEFAULT 0 CHECK (total_bytes >= 0),
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT versions_name_version_key UNIQUE (name, version)
);

-- files lists the regular files of a ready version. path is bytea because
-- tarball entry names need not be valid UTF-8, and because ORDER BY on
-- bytea is plain byte order whatever the database collation. The primary
-- key clusters a version's files in path order, which is what Files reads.
--
-- The foreign key to blobs makes "every file has a body" a database fact:
-- CommitVersion fails (ErrMissingBlob) rather than recording a dangling
-- file, and a future blob GC cannot delete a body a commit is referencing.
-- That GC will need an index on files(hash); it is not created now because
-- every commit would pay for it and nothing reads by hash yet.
CREATE TABLE files (
    version_id bigint  NOT NULL REFERENCES versions (id) ON DELETE CASCADE,
    path       bytea   NOT NULL,
    hash       bytea   NOT NULL CONSTRAINT files_hash_fkey REFERENCES blobs (hash),
    size       bigint  NOT NULL CHECK (size >= 0),
    is_binary  boolean NOT NULL,
    PRIMARY KEY (version_id, path)
);

-- +goose Down
DROP TABLE files;
DROP TABLE versions;
DROP TABLE blobs;
