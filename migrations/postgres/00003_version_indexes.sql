-- Search indexes: one row per version and index format. The index file
-- itself is stored as blobs (chunks listed in order in chunks, 32-byte
-- sha256 hashes concatenated), so it is compressed and deduplicated like
-- file bodies. A blob GC must treat these chunks as referenced.

-- +goose Up
CREATE TABLE version_indexes (
    version_id bigint           NOT NULL REFERENCES versions (id) ON DELETE CASCADE,
    format     integer          NOT NULL CHECK (format > 0),
    size       bigint           NOT NULL CHECK (size >= 0),
    chunks     bytea            NOT NULL CHECK (octet_length(chunks) % 32 = 0),
    coverage   double precision NOT NULL,
    stats      text             NOT NULL,
    created_at timestamptz      NOT NULL DEFAULT now(),
    PRIMARY KEY (version_id, format)
);

-- +goose Down
DROP TABLE version_indexes;
