-- Each file's tar mode and its position in the tarball, which npm diff
-- prints ("index v1..v2 100644") and orders by. 0 in both for versions
-- stored before this migration: mode unknown (shown as 100644, what npm
-- pack writes) and byte order.

-- +goose Up
ALTER TABLE files ADD COLUMN mode integer NOT NULL DEFAULT 0 CHECK (mode >= 0);
ALTER TABLE files ADD COLUMN ord  integer NOT NULL DEFAULT 0 CHECK (ord >= 0);

-- +goose Down
ALTER TABLE files DROP COLUMN ord;
ALTER TABLE files DROP COLUMN mode;
