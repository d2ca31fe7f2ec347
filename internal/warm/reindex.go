package warm

import (
	"context"
	"errors"
	"fmt"

	"github.com/pkgscope/pkgscope/internal/index"
	"github.com/pkgscope/pkgscope/internal/ingest"
	"github.com/pkgscope/pkgscope/internal/store"
)

// IngestFormat is the version of the extraction rules (internal/ingest's
// entry rules and limits, internal/pkgpath's path rule) that this binary
// stores versions under: ingest.Format, which ingest records with each
// version it commits. `indexer reindex` finds the versions recorded under
// an older format (versions.ingest_format) and ingests them again.
const IngestFormat = ingest.Format

// Stale lists the ready versions stored under an ingest format older than
// format, by name and version, at most limit of them.
func (q *Queue) Stale(ctx context.Context, format, limit int) ([]Want, error) {
	if format > IngestFormat {
		return nil, fmt.Errorf("warm: format %d is newer than this binary's ingest format %d; re-ingesting would store format %d again", format, IngestFormat, IngestFormat)
	}
	refs, err := q.maint.OlderIngest(ctx, format, limit)
	if err != nil {
		return nil, fmt.Errorf("warm: list versions older than ingest format %d: %w", format, err)
	}
	return wants(refs, Want{Reformat: format}), nil
}

// Unindexed lists the ready versions that have no search index of format
// (index.FormatVersion: the only one this binary builds), at most limit of
// them. Indexes of other formats are left in place: a node still running
// the older binary keeps using them until it is upgraded.
func (q *Queue) Unindexed(ctx context.Context, format, limit int) ([]Want, error) {
	if format != index.FormatVersion {
		return nil, fmt.Errorf("warm: this binary builds search index format %d, not %d", index.FormatVersion, format)
	}
	refs, err := q.maint.Unindexed(ctx, format, limit)
	if err != nil {
		return nil, fmt.Errorf("warm: list versions without a format %d index: %w", format, err)
	}
	return wants(refs, Want{Index: format}), nil
}

// wants turns refs into warm requests shaped like w.
func wants(refs []store.VersionRef, w Want) []Want {
	out := make([]Want, len(refs))
	for i, r := range refs {
		out[i] = w
		out[i].Name, out[i].Spec = r.Name, r.Version
	}
	return out
}

// reindex builds name@version's search index; the version must be stored.
func (q *Queue) reindex(ctx context.Context, name, version string) (Outcome, error) {
	out := Outcome{Version: version}
	if q.deps.Index == nil {
		return out, fmt.Errorf("warm: no indexer configured (Deps.Index) to index %s@%s", name, version)
	}
	v, err := q.deps.Store.Version(ctx, name, version)
	if err != nil || v.State != store.StateReady {
		return out, fmt.Errorf("indexing %s@%s: not stored (%v): %w", name, version, err, errNotStored)
	}
	if _, err := q.deps.Index.Ensure(ctx, name, version); err != nil {
		return out, fmt.Errorf("indexing %s@%s: %w", name, version, err)
	}
	out.State, out.Bytes = Done, v.TotalBytes
	return out, nil
}

// errNotStored: a reindex job for a version that is not in the store.
var errNotStored = errors.New("version not in the store")
