package explore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/pkgscope/pkgscope/internal/english"
	"github.com/pkgscope/pkgscope/internal/pathglob"
	"github.com/pkgscope/pkgscope/internal/store"
)

// Entry is one file or folder of a listing.
type Entry struct {
	// Path is the full path in the package; a folder's ends with "/".
	Path string `json:"path"`
	Type string `json:"type"` // EntryFile or EntryFolder
	// Bytes is a file's size, or the total size of the files below a
	// folder; Files counts a folder's files at any depth.
	Bytes int64 `json:"bytes"`
	Files int   `json:"files,omitempty"`
}

// Entry types.
const (
	EntryFile   = "file"
	EntryFolder = "folder"
)

// ListResult is the answer to list and glob: entries in byte order of
// their paths, a folder right before what it holds.
type ListResult struct {
	Answer
	// Path is the folder listed ("" for the whole package).
	Path string `json:"path,omitempty"`
	// Depth is how many levels below Path are shown, deeper folders
	// summed up in their entry; 0 lists every file (and no folder).
	Depth int `json:"depth,omitempty"`
	// TotalFiles and TotalBytes are the files under Path (list) or the
	// files and folders matched (glob), on every page together.
	TotalFiles int     `json:"totalFiles"`
	TotalBytes int64   `json:"totalBytes"`
	Entries    []Entry `json:"entries"`
}

// List answers the files and folders under r.Path to r.Depth levels. With
// no depth it lists every file when they fit the budget, else the deepest
// tree summary that does, so a big package (next: 9,000 files, 445 KB as
// a flat list) answers its layout on the first page.
func (s *Service) List(ctx context.Context, r Request) (*ListResult, error) {
	r.Action = "list"
	if err := checkDepth(r); err != nil {
		return nil, err
	}
	b, o, a, err := s.start(ctx, &r, false)
	if err != nil {
		return nil, err
	}
	res := &ListResult{Answer: a}
	if err := listFiles(res, s.treeOf(o), o.Files, o.Name, o.Name+"@"+o.Version, b, r); err != nil {
		return nil, err
	}
	return res, nil
}

func checkDepth(r Request) error {
	if r.Depth < 0 {
		return &InputError{Field: "depth", Err: errors.New("must not be negative")}
	}
	return nil
}

// ListFiles fills res, whose Answer is the header, with list's answer over
// files (sorted by path): what is under the folder r.Path names, to
// r.Depth levels or, with no depth, every file when they fit b, else the
// deepest tree that does; paged by PageEntries. name, when set, is the
// package's, so that a path written from the project root
// (node_modules/<name>/…) is read from the package root; in names the
// tree in a not-found error. A package's list and a project's share it.
func ListFiles(res *ListResult, files []store.File, name, in string, b *Budget, r Request) error {
	return listFiles(res, nil, files, name, in, b, r)
}

// listFiles is ListFiles with t, the tree of files when the caller holds
// one (a stored version's, Service.treeOf); nil makes the tree of the
// folder listed.
func listFiles(res *ListResult, t *fileTree, files []store.File, name, in string, b *Budget, r Request) error {
	if err := checkDepth(r); err != nil {
		return err
	}
	res.Depth, res.Entries = r.Depth, []Entry{}
	dir, files, isFile, err := folder(files, name, in, &res.Answer, r.Path)
	if err != nil {
		return err
	}
	res.Path = dir
	for _, f := range files {
		res.TotalBytes += f.Size
	}
	res.TotalFiles = len(files)
	b.ReserveHeader(res.Answer, r)
	if t == nil || isFile {
		t = newFileTree(files)
	}
	v := t.below(dir)
	if r.Depth == 0 && r.Cursor == "" {
		res.Depth = v.autoDepth(b.Left())
		if res.Depth > 0 {
			res.Note("%d files, too many to list in %d bytes: a tree to depth %d; list a folder with path (and depth) to see inside it",
				len(files), b.Limit(), res.Depth)
		}
	}
	v.page(res, res.Depth, b, r)
	return nil
}

// Glob answers the files and folders r.Patterns select.
func (s *Service) Glob(ctx context.Context, r Request) (*ListResult, error) {
	r.Action = "glob"
	if len(r.Patterns) == 0 {
		return nil, &InputError{Field: "patterns", Err: errors.New(`give at least one glob, e.g. ["dist/**/*.d.ts"]`)}
	}
	m, err := pathglob.Compile(r.Patterns, s.lim.Glob)
	if err != nil {
		return nil, &InputError{Field: "patterns", Err: err}
	}
	b, o, a, err := s.start(ctx, &r, false)
	if err != nil {
		return nil, err
	}
	res := &ListResult{Answer: a, Entries: []Entry{}}
	t := s.treeOf(o)
	g, err := t.glob(ctx, m)
	if err != nil {
		return nil, fmt.Errorf("matching the paths of %s@%s: %w", o.Name, o.Version, err)
	}
	res.TotalFiles, res.TotalBytes = g.n, g.bytes
	if r.Cursor == "" {
		s.globNote(ctx, res, t, o.Files, r.Patterns, g.n)
	}
	b.ReserveHeader(res.Answer, r)
	g.page(res, t, b, r)
	return res, nil
}

// maxTopLevelNamed is how many top-level files and folders a glob that
// matched nothing names.
const maxTopLevelNamed = 12

// globNote says what to send instead when patterns match nothing, or
// less than the agent likely meant. find's and ripgrep's habit is that
// "*.d.ts" matches in any folder; here (doublestar, as the agent's own
// glob tools) it is the top level only: lucide-react's "*.d.ts" matches 2
// top-level files and misses dist/lucide-react.d.ts. When the "**/"
// patterns match more, the note gives them and their count. A glob that
// matched nothing otherwise names what the top level holds, to glob or
// list from there. Its cost is at most a second glob under the same limits
// (the "**/" patterns compile under s.lim.Glob, or the note is left out).
// files is the listing t was made of.
func (s *Service) globNote(ctx context.Context, res *ListResult, t *fileTree, files []store.File, patterns []string, matched int) {
	widened := make([]string, len(patterns))
	changed := false
	for i, p := range patterns {
		widened[i] = p
		// "*" alone asks for the top level (README's example): kept.
		if !strings.HasPrefix(p, "!") && !strings.Contains(p, "/") && !strings.HasPrefix(p, "**") && strings.Trim(p, "*") != "" {
			widened[i], changed = "**/"+p, true
		}
	}
	if changed {
		if m, err := pathglob.Compile(widened, s.lim.Glob); err == nil {
			if wide, err := t.glob(ctx, m); err == nil && wide.n > matched {
				w, _ := json.Marshal(widened)
				what := "no path matches"
				if matched > 0 {
					what = english.Count(matched, "top-level path") + " match"
				}
				res.Note("%s: a glob without '/' matches the top level only; %.300s matches %d in any folder (e.g. %q)", what, w, wide.n, t.entries[wide.first].Path)
				return
			}
		}
	}
	if matched > 0 {
		return
	}
	if note := sameNameNote(files, patterns); note != "" {
		res.Note("%s", note)
		return
	}
	var top []string
	for i, all := 0, t.below(""); i < len(t.entries); i++ {
		if !all.shows(i, 1) {
			continue // below the top level
		}
		if len(top) == maxTopLevelNamed {
			top = append(top, "…")
			break
		}
		top = append(top, t.entries[i].Path)
	}
	res.Note("no path of the %s matches; the top level holds %s: glob or list from there", english.Count(len(files), "file"), strings.Join(top, ", "))
}

// sameNameNote names what a glob that matched nothing looked for where
// it is: the files named like a pattern's last segment in any folder
// and with any extension, declarations first (next has no
// "src/**/navigation.ts" but dist/client/components/navigation.d.ts and
// .js; in path order the first five were dist/api's, maps among them), or, for "*.tsx",
// the types of file the package has (npm packages seldom ship their
// sources). "" when no pattern is of either kind or nothing is named so.
func sameNameNote(files []store.File, patterns []string) string {
	for _, p := range patterns {
		if strings.HasPrefix(p, "!") {
			continue
		}
		base := path.Base(p)
		stem, ext, _ := strings.Cut(base, ".")
		ext = "." + ext
		switch {
		case stem != "" && !strings.ContainsAny(stem, "*?[{\\"):
			var same []store.File
			for _, f := range files {
				if b := path.Base(f.Path); b == stem || strings.HasPrefix(b, stem+".") {
					same = append(same, f)
				}
			}
			if len(same) > 0 {
				// Declarations first, source maps last, as grep ranks.
				slices.SortStableFunc(same, func(a, b store.File) int { return fileTier(a.Path, a.Size) - fileTier(b.Path, b.Size) })
				var named []string
				for _, f := range same[:min(len(same), maxSuggestions)] {
					named = append(named, f.Path)
				}
				return fmt.Sprintf("no path matches %q; %s named %s.* in other folders: %s", p, english.Count(len(same), "file"), stem, strings.Join(named, ", "))
			}
		case stem == "*" && ext != "." && !strings.ContainsAny(ext, "*?[{\\"):
			return fmt.Sprintf("no file of the %s ends in %s; the package has %s", english.Count(len(files), "file"), ext, fileTypes(files))
		}
	}
	return ""
}

// maxTypesNamed is how many file types fileTypes names.
const maxTypesNamed = 6

// fileTypes names the commonest types of files, most first: ".js 812,
// .d.ts 640, .map 590, …".
func fileTypes(files []store.File) string {
	count := map[string]int{}
	for _, f := range files {
		t := typeExt(f.Path)
		if t == "" {
			t = "no extension"
		}
		count[t]++
	}
	types := slices.Collect(maps.Keys(count))
	slices.SortFunc(types, func(a, b string) int {
		if c := count[b] - count[a]; c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	var out []string
	for i, t := range types {
		if i == maxTypesNamed {
			out = append(out, "…")
			break
		}
		out = append(out, fmt.Sprintf("%s %d", t, count[t]))
	}
	return strings.Join(out, ", ")
}

// PageEntries fills res with the entries of all (in byte order of their
// paths) after r's cursor while b lasts, cutting res with the request that
// continues it: list's and glob's paging, a project's too.
func PageEntries(res *ListResult, all []Entry, b *Budget, r Request) {
	pageEntries(res, all, nil, nil, b, r)
}

// pageEntries is PageEntries over the entries of all that shows selects
// (nil: every one), costs holding each one's cost (nil: counted here).
// The page is measured first and copied once: appended entry by entry,
// its growing was 7% of the bytes the agent mix allocated (issue 27).
func pageEntries(res *ListResult, all []Entry, costs []int32, shows func(int) bool, b *Budget, r Request) {
	from := 0
	if r.Cursor != "" {
		after := strings.TrimPrefix(r.Cursor, "l:")
		from = sort.Search(len(all), func(i int) bool { return all[i].Path > after })
	}
	to, n, cut := from, 0, false // the page is all[from:to], n entries of it shown
	for ; to < len(all); to++ {
		if shows != nil && !shows(to) {
			continue
		}
		var cost int
		if costs != nil {
			cost = int(costs[to])
		} else {
			cost = all[to].cost()
		}
		if !b.Take(cost) {
			cut = true
			break
		}
		n++
	}
	res.Entries = slices.Grow(res.Entries, n)
	for i := from; i < to; i++ {
		if shows == nil || shows(i) {
			res.Entries = append(res.Entries, all[i])
		}
	}
	if cut {
		next := r
		next.Depth = res.Depth
		res.Cut(TruncMaxBytes, continued(next, &res.Answer, "l:"+res.Entries[len(res.Entries)-1].Path))
	}
}

// folder returns the clean folder raw names among files and the files
// below it. A path that is a file answers that file alone, in its folder,
// saying so (as ls FILE does; isFile); a missing one is a *NotFoundError
// naming the closest folders. name and in are ListFiles'.
func folder(all []store.File, name, in string, a *Answer, raw string) (dir string, files []store.File, isFile bool, err error) {
	if strings.Trim(raw, "/.") == "" {
		return "", all, false, nil
	}
	dir, err = cleanPath(raw)
	if err != nil {
		return "", nil, false, err
	}
	for _, d := range candidates(name, dir) {
		if files := under(all, d); len(files) > 0 {
			if d != dir {
				a.Note("path %q was read as %q (paths are relative to the package root)", raw, d)
			}
			return d, files, false, nil
		}
		if f, ok := lookup(all, d); ok {
			a.Note("%q is a file, not a folder: read it", d)
			return strings.Trim(path.Dir(d), "."), []store.File{f}, true, nil
		}
	}
	return "", nil, false, &NotFoundError{What: fmt.Sprintf("folder %q in %s", dir, in), Hint: closestPaths("", all, dir, true)}
}

// under returns the files below folder dir (sorted files: a run).
func under(files []store.File, dir string) []store.File {
	prefix := dir + "/"
	i := sort.Search(len(files), func(i int) bool { return files[i].Path >= prefix })
	j := i
	for j < len(files) && strings.HasPrefix(files[j].Path, prefix) {
		j++
	}
	return files[i:j]
}

// lookup finds path among sorted files.
func lookup(files []store.File, path string) (store.File, bool) {
	i := sort.Search(len(files), func(i int) bool { return files[i].Path >= path })
	if i < len(files) && files[i].Path == path {
		return files[i], true
	}
	return store.File{}, false
}

// tree lists files below dir to depth levels: the files at most depth
// levels down, and every folder down to depth levels with its totals.
// depth 0 lists every file and no folder; -1 every file and every folder.
func tree(files []store.File, dir string, depth int) []Entry {
	prefix := ""
	if dir != "" {
		prefix = dir + "/"
	}
	// A list or glob builds this tree on every request, so it allocates
	// little: folder paths are slices of the file paths (which begin
	// with prefix), and a file's folders are looked up in the map only
	// when they are not the previous file's (files come in path order).
	var out []Entry
	if depth <= 0 {
		out = make([]Entry, 0, len(files))
	}
	folders := map[string]int{} // path -> index in out
	var last []int              // level -> index in out of the previous file's folder
	for _, f := range files {
		rel := f.Path[len(prefix):]
		level := 0 // folders passed
		for i := 0; i < len(rel) && depth != 0; i++ {
			if rel[i] != '/' {
				continue
			}
			if level++; depth > 0 && level > depth {
				break
			}
			p := f.Path[:len(prefix)+i+1]
			var k int
			if level <= len(last) && out[last[level-1]].Path == p {
				k = last[level-1]
			} else {
				var ok bool
				if k, ok = folders[p]; !ok {
					k = len(out)
					folders[p] = k
					out = append(out, Entry{Path: p, Type: EntryFolder})
				}
				last = append(last[:level-1], k)
			}
			out[k].Files++
			out[k].Bytes += f.Size
		}
		if depth <= 0 || strings.Count(rel, "/") < depth {
			out = append(out, Entry{Path: f.Path, Type: EntryFile, Bytes: f.Size})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// cost is Cost(e), counted rather than encoded: listing a package's
// folders weighs every entry, and json.Marshal of each was a tenth of the
// CPU of a mixed agent load (issue 27). TestEntryCost holds it to Cost.
func (e Entry) cost() int {
	// {"path":…,"type":…,"bytes":…} and the separator Cost counts.
	n := len(`{"path":,"type":,"bytes":}`) + StringCost(e.Path) + StringCost(e.Type) + digits(e.Bytes) + 1
	if e.Files != 0 {
		n += len(`,"files":`) + digits(int64(e.Files))
	}
	return n
}

// digits is the length of n in decimal, its sign included.
func digits(n int64) int {
	d := 1
	if n < 0 {
		d++
	}
	for n <= -10 || n >= 10 {
		n /= 10
		d++
	}
	return d
}

// FileList is every file path of a version that the patterns select:
// the /v1/npm/{name}/-/files answer, a plain list with no budget (a
// download, not an answer a model reads).
type FileList struct {
	PackageName string   `json:"packageName"`
	Version     string   `json:"version"`
	Files       []string `json:"files"`
	Source      string   `json:"source,omitempty"`
}

// FileList returns the paths patterns select (every path when none), in
// byte order.
func (s *Service) FileList(ctx context.Context, t Target, patterns []string) (*FileList, error) {
	m, err := pathglob.Compile(patterns, s.lim.Glob)
	if err != nil {
		return nil, &InputError{Field: "patterns", Err: err}
	}
	o, err := s.Open(ctx, t)
	if err != nil {
		return nil, err
	}
	res := &FileList{PackageName: o.Name, Version: o.Version, Files: []string{}, Source: o.Source}
	files, err := pathglob.Select(ctx, m, o.Files, func(f store.File) string { return f.Path })
	if err != nil {
		return nil, fmt.Errorf("matching the paths of %s@%s: %w", o.Name, o.Version, err)
	}
	for _, f := range files {
		res.Files = append(res.Files, f.Path)
	}
	return res, nil
}
