// Package migrations holds the schema of both stores as goose SQL
// migrations, embedded so that a pkgscope binary migrates its database on
// start with no files beside it. store/postgres and store/sqlite apply them
// on Open with goose's Provider; the two directories keep the same version
// numbers so that a change lands in both at once.
package migrations

import (
	"embed"
	"io/fs"
)

//go:embed postgres/*.sql sqlite/*.sql
var files embed.FS

// Postgres is the migration directory for store/postgres.
var Postgres fs.FS = mustSub("postgres")

// SQLite is the migration directory for store/sqlite.
var SQLite fs.FS = mustSub("sqlite")

func mustSub(dir string) fs.FS {
	sub, err := fs.Sub(files, dir)
	if err != nil {
		// fs.Sub fails only on an invalid path, a constant here.
		panic(err)
	}
	return sub
}
