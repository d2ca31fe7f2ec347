package licence

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/licensecheck"
)

// allowed are the licences a module may carry (SPDX ids, as licensecheck
// names them). Permissive ones, plus three whose conditions a user of
// pkgscope's binaries meets without doing anything:
//   - MPL-2.0 (River, golang-lru): its copyleft is per file and binds only
//     changes to the library's own files; we use them unmodified, and
//     docs/DEPENDENCIES.md says where their source is.
//   - OFL-1.1: fonts chroma embeds in its SVG formatter; the font licence
//     allows bundling them with any software.
//   - CC-BY-4.0: the MCP SDK's documentation, named by URL in its LICENSE.
//
// Everything else fails, including the GPL family (strong copyleft) and
// any licence licensecheck does not recognise: a person decides, then
// adds it here with the reason.
var allowed = map[string]bool{
	"MIT": true, "MIT-0": true, "BSD-2-Clause": true, "BSD-3-Clause": true, "Apache-2.0": true,
	"ISC": true, "Zlib": true, "0BSD": true, "Unlicense": true, "CC0-1.0": true, "blessing": true,
	"MPL-2.0": true, "OFL-1.1": true, "CC-BY-4.0": true,
}

// explained are licence files licensecheck does not recognise, each
// identified by a phrase it must contain: the SPDX id it stands for, or
// "" for a file that licenses nothing the build includes.
var explained = map[string]struct{ phrase, id string }{
	// SQLite's public-domain dedication (SPDX "blessing").
	"modernc.org/sqlite/LICENSE-SQLITE": {"SQLite Is Public Domain", "blessing"},
	// A link to where the project's logo image came from; no build
	// includes the image.
	"modernc.org/memory/LICENSE-LOGO": {"commons.wikimedia.org", ""},
}

// minCoverage is the share of a module's main licence file (LICENSE,
// COPYING) that licensecheck must match: recognised licence texts cover
// 85-100% of every main file here (the rest is copyright lines and
// headings). Files that gather third-party notices (LICENSE-3RD-PARTY.md)
// interleave prose with the texts and are only checked for the licences
// they contain.
const minCoverage = 80

// licenceFile matches the names of licence files in a module's root:
// LICENSE, LICENCE.txt, COPYING, LICENSE-GO, LICENSE-3RD-PARTY.md.
var licenceFile = regexp.MustCompile(`^(?i)(licen[cs]e|copying)([-_][^.]*)?(\.(txt|md))?$`)

type module struct {
	Path, Version string
	Indirect      bool
	Dir           string
}

func TestDependencyLicences(t *testing.T) {
	mods := goModModules(t)
	documented := documentedLicences(t)
	for _, m := range mods {
		ids, problems := classify(m)
		for _, p := range problems {
			t.Errorf("%s@%s: %s", m.Path, m.Version, p)
		}
		req := "direct"
		if m.Indirect {
			req = "indirect"
		}
		want := row{strings.Join(ids, ", "), req}
		doc, ok := documented[m.Path]
		switch {
		case !ok:
			t.Errorf("%s is in go.mod but not in docs/DEPENDENCIES.md's Licences table; add:\n| %s | %s | %s |", m.Path, m.Path, want.licence, want.requirement)
		case doc != want:
			t.Errorf("docs/DEPENDENCIES.md says %s is %+v; go.mod and its licence files say %+v", m.Path, doc, want)
		}
		delete(documented, m.Path)
	}
	for path := range documented {
		t.Errorf("docs/DEPENDENCIES.md's Licences table lists %s, which go.mod does not require: remove the row", path)
	}
}

// classify returns the sorted licence ids of m's licence files, and what
// is wrong with them.
func classify(m module) (ids []string, problems []string) {
	ents, err := os.ReadDir(m.Dir)
	if err != nil {
		return nil, []string{err.Error()}
	}
	main := 0
	for _, e := range ents {
		if e.IsDir() || !licenceFile.MatchString(e.Name()) {
			continue
		}
		text, err := os.ReadFile(filepath.Join(m.Dir, e.Name()))
		if err != nil {
			return nil, []string{err.Error()}
		}
		if x, ok := explained[m.Path+"/"+e.Name()]; ok {
			if !bytes.Contains(text, []byte(x.phrase)) {
				problems = append(problems, fmt.Sprintf("%s no longer says %q: read it and update explained", e.Name(), x.phrase))
			}
			if x.id != "" {
				ids = append(ids, x.id)
			}
			continue
		}
		cov := licensecheck.Scan(text)
		isMain := !strings.ContainsAny(e.Name(), "-_")
		if isMain {
			main++
		}
		if len(cov.Match) == 0 || isMain && cov.Percent < minCoverage {
			problems = append(problems, fmt.Sprintf("%s: no licence recognised over %.0f%% of its text (want %d%%): read it, and if it may be shipped add it to explained", e.Name(), cov.Percent, minCoverage))
		}
		for _, match := range cov.Match {
			if !allowed[match.ID] {
				problems = append(problems, fmt.Sprintf("%s: %s is not an allowed licence (copyleft or not reviewed)", e.Name(), match.ID))
			}
			ids = append(ids, match.ID)
		}
	}
	if main == 0 {
		problems = append(problems, "no LICENSE or COPYING file in the module")
	}
	slices.Sort(ids)
	return slices.Compact(ids), problems
}

// goModModules returns every module go.mod requires, direct and
// indirect, downloaded into the module cache (already there after a
// build; CI fetches them from the module proxy like any build).
func goModModules(t *testing.T) []module {
	t.Helper()
	var gomod struct{ Require []module }
	if err := json.Unmarshal(goCmd(t, "mod", "edit", "-json"), &gomod); err != nil {
		t.Fatal(err)
	}
	args := []string{"mod", "download", "-json"}
	for _, m := range gomod.Require {
		args = append(args, m.Path+"@"+m.Version)
	}
	dirs := map[string]string{}
	for dec := json.NewDecoder(bytes.NewReader(goCmd(t, args...))); dec.More(); {
		var d struct{ Path, Dir, Error string }
		if err := dec.Decode(&d); err != nil {
			t.Fatal(err)
		}
		if d.Error != "" {
			t.Fatalf("go mod download %s: %s", d.Path, d.Error)
		}
		dirs[d.Path] = d.Dir
	}
	for i := range gomod.Require {
		gomod.Require[i].Dir = dirs[gomod.Require[i].Path]
	}
	return gomod.Require
}

func goCmd(t *testing.T, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v", strings.Join(args, " "), err)
	}
	return out
}

// row is one module's row of the Licences table.
type row struct{ licence, requirement string }

// documentedLicences reads the "## Licences" table of
// docs/DEPENDENCIES.md: module → its row.
func documentedLicences(t *testing.T) map[string]row {
	t.Helper()
	f, err := os.Open("../../docs/DEPENDENCIES.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]row{}
	in := false
	for sc := bufio.NewScanner(f); sc.Scan(); {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			in = line == "## Licences"
			continue
		}
		cells := strings.Split(line, "|")
		if !in || len(cells) < 5 || strings.HasPrefix(cells[1], "---") || strings.TrimSpace(cells[1]) == "module" {
			continue
		}
		out[strings.TrimSpace(cells[1])] = row{strings.TrimSpace(cells[2]), strings.TrimSpace(cells[3])}
	}
	if len(out) == 0 {
		t.Fatal(`docs/DEPENDENCIES.md has no "## Licences" table (| module | licence | in go.mod |)`)
	}
	return out
}

// TestClassifyRefuses: a copyleft licence, a text no classifier knows and
// a module without a licence file each fail the check.
func TestClassifyRefuses(t *testing.T) {
	gpl := `This program is free software: you can redistribute it and/or modify
it under the terms of the GNU General Public License as published by
the Free Software Foundation, either version 3 of the License, or
(at your option) any later version.

This program is distributed in the hope that it will be useful,
but WITHOUT ANY WARRANTY; without even the implied warranty of
MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the
GNU General Public License for more details.

You should have received a copy of the GNU General Public License
along with this program.  If not, see <https://www.gnu.org/licenses/>.
`
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"copyleft", map[string]string{"COPYING": gpl}, "is not an allowed licence"},
		{"unknown text", map[string]string{"LICENSE": "You may use this on Tuesdays.\n"}, "no licence recognised"},
		{"no licence file", map[string]string{"README.md": "MIT\n"}, "no LICENSE or COPYING file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, text := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			ids, problems := classify(module{Path: "example.com/m", Dir: dir})
			if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, tc.want) }) {
				t.Errorf("classify = %v, %q; want a problem saying %q", ids, problems, tc.want)
			}
		})
	}
}
