package mcp

import (
	"fmt"
	"slices"
	"strings"

	"github.com/pkgscope/pkgscope/internal/english"
	"github.com/pkgscope/pkgscope/internal/explore"
)

// foldEntries renders a listing's entries as the shell's brace expansion
// writes a family of names: a stem's build variants on one line
// ("locale/af.{cjs,d.cts,d.ts,js}", with its folder "af{.cjs,…,/}"), and
// the stems of one folder that have the same variants on one line too
// ("locale/{af,ar-DZ,…}{.cjs,.d.cts,.d.ts,.js,/}"). date-fns' locale/ was
// 12.3 KB of text, 485 lines of 97 locales' four builds and folder; the
// JSON keeps every entry. A name alone (one file, or a folder with no
// file of its stem) keeps its own line with its size. Lines come in the
// order of each family's first entry.
func foldEntries(entries []explore.Entry) []string {
	stems := map[[2]string]*stem{}
	var order []*stem
	for i, e := range entries {
		parent, name := splitEntry(e)
		ext := ""
		if e.Type != explore.EntryFolder {
			var ok bool
			if name, ext, ok = strings.Cut(name, "."); !ok || name == "" || ext == "" {
				continue // no stem (README, .npmignore): its own line
			}
		}
		s := stems[[2]string{parent, name}]
		if s == nil {
			s = &stem{parent: parent, name: name}
			stems[[2]string{parent, name}] = s
			order = append(order, s)
		}
		s.members = append(s.members, i)
		if e.Type == explore.EntryFolder {
			s.folder = &entries[i]
		} else {
			s.exts = append(s.exts, ext)
			s.bytes += e.Bytes
		}
	}
	// A family: the stems of one folder with the same variants. Its line
	// goes where its first entry was; a stem of one entry is no family.
	folded := map[int]bool{}
	families := map[string][]*stem{}
	at := map[int]string{}
	for _, s := range order {
		if len(s.members) < 2 {
			continue
		}
		slices.Sort(s.exts)
		key := fmt.Sprintf("%s\x00%s\x00%v", s.parent, strings.Join(s.exts, ","), s.folder != nil)
		if _, ok := families[key]; !ok {
			at[s.members[0]] = key
		}
		families[key] = append(families[key], s)
		for _, i := range s.members {
			folded[i] = true
		}
	}
	var lines []string
	for i, e := range entries {
		if !folded[i] {
			lines = append(lines, entry(e))
		} else if key, ok := at[i]; ok {
			lines = append(lines, familyLine(families[key]))
		}
	}
	return lines
}

// stem is the files of one folder named <name>.<ext>, and its folder
// <name>/.
type stem struct {
	parent, name string
	exts         []string // what follows the name's first dot
	members      []int    // indexes of its entries
	bytes        int64
	folder       *explore.Entry
}

// familyLine is one line for stems with the same variants:
// "locale/{af,ar}{.cjs,.js,/} (4 files, 3.1 KB; 2 folders: 48 files, 190.2 KB)".
func familyLine(f []*stem) string {
	s0 := f[0]
	names := s0.name
	if len(f) > 1 {
		ns := make([]string, len(f))
		for i, s := range f {
			ns[i] = s.name
		}
		names = "{" + strings.Join(ns, ",") + "}"
	}
	files, folderFiles := 0, 0
	var bytes, folderBytes int64
	for _, s := range f {
		files += len(s.exts)
		bytes += s.bytes
		if s.folder != nil {
			folderFiles += s.folder.Files
			folderBytes += s.folder.Bytes
		}
	}
	alts := ".{" + strings.Join(s0.exts, ",") + "}"
	counts := english.Count(files, "file") + ", " + english.Bytes(bytes)
	if s0.folder != nil {
		alts = "{." + strings.Join(s0.exts, ",.") + ",/}"
		counts += fmt.Sprintf("; %s: %s, %s", english.Count(len(f), "folder"), english.Count(folderFiles, "file"), english.Bytes(folderBytes))
	}
	return s0.parent + names + alts + " (" + counts + ")"
}

// splitEntry is an entry's folder (with its slash) and name (a folder's
// without its slash).
func splitEntry(e explore.Entry) (parent, name string) {
	p := strings.TrimSuffix(e.Path, "/")
	i := strings.LastIndexByte(p, '/')
	return p[:i+1], p[i+1:]
}
