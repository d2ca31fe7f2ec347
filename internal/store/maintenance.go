package store

import "context"

// VersionRef names one version.
type VersionRef struct {
	Name, Version string
}

// Maintenance is what `indexer reindex` asks of the store: the versions a
// newer binary must redo, and the reset that lets the fill chain store one
// afresh. The ingest format is versions.ingest_format (warm.IngestFormat
// names the current one); index formats are the IndexRecord's Format.
type Maintenance interface {
	// OlderIngest returns up to limit ready versions stored under an
	// ingest format below format, by name then version.
	OlderIngest(ctx context.Context, format, limit int) ([]VersionRef, error)
	// Unindexed returns up to limit ready versions that have no index of
	// format (indexes of other formats do not count), by name then
	// version.
	Unindexed(ctx context.Context, format, limit int) ([]VersionRef, error)
	// ResetForReingest turns name@version, when it is ready under an
	// ingest format below format, into a failed record with reason and
	// with no files and no indexes, in one transaction (a failed record
	// never has files), so that the next CommitVersion stores it afresh.
	// It reports whether it did; a version that is missing, failed or at
	// format already is left alone (false, nil). Until the new commit the
	// version is a miss for readers, who fill it themselves.
	ResetForReingest(ctx context.Context, name, version string, format int, reason string) (bool, error)
	// SetIngestFormat records that ready name@version is stored under
	// format. ErrNotFound when it is not ready.
	SetIngestFormat(ctx context.Context, name, version string, format int) error
}
