// Package topology tests the org-wide deployment from the real binaries:
// several mirror processes on loopback ports sharing one Postgres schema
// and one Redis, in front of one fake registry: the same topology as
// docker-compose.yml, which cannot run on the build machines.
//
// The tests build cmd/mirror once per run. They need Postgres and Redis
// (internal/pgtest, internal/redistest) and fail, never skip, without
// them.
package topology
