package lockfile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tailscale/hujson"
)

// lockfileNames lists the files Find looks for, in the order it prefers
// them when package.json names no package manager. npm-shrinkwrap.json
// comes before package-lock.json because npm itself prefers it; the other
// tools follow in no particular order of merit, fixed so the answer is
// stable. bun.lockb (bun's binary format before 1.2) is not read.
var lockfileNames = []string{"npm-shrinkwrap.json", "package-lock.json", "pnpm-lock.yaml", "yarn.lock", "bun.lock"}

// managerFiles maps corepack's packageManager names to their lockfiles.
var managerFiles = map[string][]string{
	"npm":  {"npm-shrinkwrap.json", "package-lock.json"},
	"pnpm": {"pnpm-lock.yaml"},
	"yarn": {"yarn.lock"},
	"bun":  {"bun.lock"},
}

// Find returns the path of the file that describes projectDir's
// dependencies: the lockfile of the package manager package.json's
// "packageManager" field names ("pnpm@9.1.0") if it exists; else the
// first that exists of npm-shrinkwrap.json, package-lock.json,
// pnpm-lock.yaml, yarn.lock and bun.lock; else package.json itself. It
// looks in projectDir only, not in parent folders, and returns an error
// matching ErrNoLockfile when none of these exists.
func Find(projectDir string) (string, error) {
	manifest := filepath.Join(projectDir, "package.json")
	if data, err := DefaultLimits().readFile(manifest); err == nil {
		var m struct {
			PackageManager string `json:"packageManager"`
		}
		if json.Unmarshal(bytes.TrimPrefix(data, utf8BOM), &m) == nil {
			name, _, _ := strings.Cut(m.PackageManager, "@")
			for _, f := range managerFiles[name] {
				if p := filepath.Join(projectDir, f); isFile(p) {
					return p, nil
				}
			}
		}
	}
	for _, f := range lockfileNames {
		if p := filepath.Join(projectDir, f); isFile(p) {
			return p, nil
		}
	}
	if isFile(manifest) {
		return manifest, nil
	}
	return "", fmt.Errorf("lockfile: %s: %w", projectDir, ErrNoLockfile)
}

func isFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

// formatByName returns the format a file's base name implies, "" for a
// name it does not know.
func formatByName(base string) string {
	switch base {
	case "package-lock.json", ".package-lock.json":
		return "package-lock"
	case "npm-shrinkwrap.json":
		return "npm-shrinkwrap"
	case "pnpm-lock.yaml", "pnpm-lock.yml":
		return "pnpm"
	case "yarn.lock":
		return "yarn"
	case "bun.lock":
		return "bun"
	case "bun.lockb":
		return "bun.lockb"
	case "package.json":
		return "package.json"
	}
	return ""
}

// sniff recognizes a lockfile by content, for a file whose name says
// nothing (an upload). It returns "" when nothing fits.
func sniff(data []byte, lim Limits) string {
	data = bytes.TrimPrefix(data, utf8BOM)
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	switch {
	case bytes.HasPrefix(trimmed, []byte("#!/usr/bin/env bun")):
		return "bun.lockb"
	case bytes.HasPrefix(trimmed, []byte("{")):
		return sniffJSON(trimmed, lim)
	case isBerry(data), bytes.Contains(data, []byte("# yarn lockfile v1")):
		return "yarn"
	}
	for _, line := range bytes.SplitN(trimmed, []byte("\n"), 3) {
		if bytes.HasPrefix(line, []byte("lockfileVersion:")) {
			return "pnpm"
		}
	}
	return ""
}

// sniffJSON tells bun.lock, package-lock.json and package.json apart: a
// lockfileVersion with "workspaces" keyed by folder ("" is bun's root) or
// array-valued packages is bun's, a lockfileVersion otherwise npm's, and
// no lockfileVersion a package.json.
func sniffJSON(data []byte, lim Limits) string {
	var probe struct {
		LockfileVersion json.RawMessage            `json:"lockfileVersion"`
		Workspaces      json.RawMessage            `json:"workspaces"`
		Packages        map[string]json.RawMessage `json:"packages"`
	}
	if json.Unmarshal(data, &probe) != nil {
		// Not strict JSON: bun.lock's trailing commas are the one JSONC
		// format here.
		if jsoncDepth(data) > lim.MaxNesting || lim.checkNodes(data) != nil {
			return "bun" // parseBun reports the nesting or the size
		}
		std, err := hujson.Standardize(append([]byte(nil), data...))
		if err != nil || json.Unmarshal(std, &probe) != nil {
			return "package.json" // let the strict parser say what is wrong
		}
	}
	if probe.LockfileVersion == nil {
		return "package.json"
	}
	var ws map[string]json.RawMessage
	if json.Unmarshal(probe.Workspaces, &ws) == nil {
		if _, ok := ws[""]; ok {
			return "bun"
		}
	}
	for _, v := range probe.Packages {
		if len(v) > 0 && v[0] == '[' {
			return "bun"
		}
		break
	}
	return "package-lock"
}
