package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/pkgscope/pkgscope/internal/explore"
	"github.com/pkgscope/pkgscope/internal/store"
)

// Projects opens the registered project an HTTP session is bound to:
// *project.Service.
type Projects interface {
	// Open returns project id after checking that the caller (the token
	// in ctx) may read every package it holds: an error wrapping an
	// *explore.NotFoundError for an unknown id, an *explore.ForbiddenError
	// for a package the caller may not read.
	Open(ctx context.Context, id string) (store.Project, error)
}

// ProjectHeader binds an HTTP request to a registered project, as
// /mcp?project=<id> does, for clients whose configuration sets headers
// more easily than URLs.
const ProjectHeader = "Pkgscope-Project"

// connection is what one HTTP request's URL and headers ask of the
// server: the project it is bound to and whether answers carry
// structuredContent.
type connection struct {
	project    *boundProject
	structured bool
}

type connectionKey struct{}

// connectionFrom returns the request's connection options; without any
// (stdio, in-memory), the server's.
func connectionFrom(ctx context.Context, opt Options) connection {
	if c, ok := ctx.Value(connectionKey{}).(connection); ok {
		return c
	}
	return connection{structured: opt.Structured}
}

// overHTTP reports whether ctx is an HTTP request's.
func overHTTP(ctx context.Context) bool {
	_, ok := ctx.Value(connectionKey{}).(connection)
	return ok
}

// withConnection reads ?project= (or Pkgscope-Project) and ?structured=
// before the SDK sees the request. A project is opened on every POST —
// the transport is stateless, so the initialize request is refused like
// every other — and a project the token may not read, or that does not
// exist, is refused with the API's status (403, 404) and a JSON-RPC
// error saying why, before any tool runs.
func withConnection(opt Options, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := connection{structured: opt.Structured}
		q := r.URL.Query()
		if v := q.Get("structured"); v != "" {
			b, err := strconv.ParseBool(v)
			if err != nil {
				refuse(w, http.StatusBadRequest, fmt.Sprintf("structured=%q: give 1 (answers carry structuredContent) or 0 (text only)", v))
				return
			}
			c.structured = b
		}
		id := q.Get("project")
		if h := r.Header.Get(ProjectHeader); h != "" {
			if id != "" && id != h {
				refuse(w, http.StatusBadRequest, "the project in the URL and the "+ProjectHeader+" header differ: give one")
				return
			}
			id = h
		}
		if id != "" && r.Method == http.MethodPost {
			if opt.Projects == nil {
				refuse(w, http.StatusBadRequest, "this server does not explore projects: leave out project")
				return
			}
			p, err := opt.Projects.Open(r.Context(), id)
			if err != nil {
				class := classify(err)
				msg := err.Error()
				if class.Status >= http.StatusInternalServerError {
					opt.Logger.Error("mcp: opening the bound project", "err", err)
					msg = "the mirror could not open the project; retry shortly"
				}
				refuse(w, class.Status, msg)
				return
			}
			c.project = &boundProject{p: p}
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), connectionKey{}, c)))
	})
}

// refuse answers an HTTP request with status and a JSON-RPC error
// carrying msg, as the SDK answers the requests it refuses.
func refuse(w http.ResponseWriter, status int, msg string) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": -32600, "message": msg}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// defaulter chooses the version of a call that names none: a local
// *Project (stdio) or a bound registered project (HTTP).
type defaulter interface {
	Default(name string) Default
}

// boundProject is a registered project an HTTP request is bound to.
type boundProject struct {
	p store.Project
}

// Default is the version the project's lockfile installs at the top of
// its tree (node_modules/<name>, what the project's own code imports), as
// lockfile.Locked answers it on stdio: a direct dependency's folder, else
// a direct alias of name, else the one version every copy shares; none
// of those means latest.
func (b *boundProject) Default(name string) Default {
	d := Default{Source: "project " + b.short() + " (" + b.p.Format + ")"}
	var alias string
	seen := map[string]bool{}
	for _, pp := range b.p.Packages {
		if pp.Package != name {
			continue
		}
		if pp.Version == "" {
			continue // a git, file or link folder: nothing the mirror serves
		}
		switch {
		case pp.Path == "node_modules/"+name:
			d.Spec, d.Locked = pp.Version, true
			return d
		case pp.Direct && alias == "":
			alias = pp.Version
		}
		seen[pp.Version] = true
	}
	if alias != "" {
		d.Spec, d.Locked = alias, true
		return d
	}
	if len(seen) == 1 {
		for v := range seen {
			d.Spec, d.Locked = v, true
			return d
		}
	}
	return Default{}
}

// short is the id's first 12 digits, as git shortens a commit.
func (b *boundProject) short() string { return b.p.ID[:min(12, len(b.p.ID))] }

// bindTo makes a call with neither packageName nor project explore the
// bound project's tree, as stdio's local project does.
func (b *boundProject) bindTo(in *explore.Request) {
	if in.PackageName == "" && in.Project == "" && in.Action != "diff" && in.Action != "" {
		in.Project = b.p.ID
	}
}
