package diff

import (
	"errors"
	"strconv"
	"strings"
)

// This file ports the parts of jsdiff 8 (the npm package "diff", which
// libnpmdiff calls as createTwoFilesPatch) that decide npm diff's hunks:
// diffLines' tokenizer and its variant of Myers' algorithm (diff/base.js,
// diff/line.js), and structuredPatch / formatPatch (patch/create.js). It
// is a port rather than a library because the Go diff libraries
// (sergi/go-diff's diff-match-patch, pmezard/go-difflib's SequenceMatcher)
// pick different, equally minimal, edit scripts: where lines repeat, the
// hunks differ, and the point is to print exactly what npm diff prints.
// The names follow jsdiff's so the two can be read side by side.

// tokenizeLines is jsdiff's line tokenizer: lines split after "\n" or
// "\r\n", each keeping its terminator; a final empty piece is dropped.
func tokenizeLines(s string) []string {
	if s == "" {
		return nil
	}
	out := make([]string, 0, strings.Count(s, "\n")+1)
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

// component is one run of jsdiff's result: count tokens kept, added or
// removed. prev links runs backwards while the search is under way.
type component struct {
	count          int
	added, removed bool
	prev           *component
}

type diffPath struct {
	oldPos int
	last   *component
}

// run is a component of the final result with its lines.
type run struct {
	added, removed bool
	lines          []string
}

// errTooComplex: the edit search passed its work budget.
var errTooComplex = errors.New("diff: too many differing lines to compare within the work budget")

// diffLines is jsdiff's diffLines(old, new, {ignoreWhitespace}) without
// the callback, timeout and maxEditLength options (npm passes none). With
// ignoreWhitespace, lines are compared after JavaScript's trim, and kept
// runs carry the new file's lines, as jsdiff's buildValues does.
//
// The search costs O((N+M)·D) for N and M lines and D differing ones; it
// stops with errTooComplex after maxWork steps (diagonals tried plus
// lines matched), where npm would go on for minutes. It also returns the
// steps it took (maxWork+1 when it stopped).
func diffLines(oldTokens, newTokens []string, ignoreWhitespace bool, maxWork int) (runs []run, work int, err error) {
	// Tokens are interned to ints so that the inner loop compares words.
	ids := map[string]int32{}
	intern := func(tokens []string) []int32 {
		out := make([]int32, len(tokens))
		for i, t := range tokens {
			if ignoreWhitespace {
				t = jsTrim(t)
			}
			id, ok := ids[t]
			if !ok {
				id = int32(len(ids))
				ids[t] = id
			}
			out[i] = id
		}
		return out
	}
	oldIDs, newIDs := intern(oldTokens), intern(newTokens)
	newLen, oldLen := len(newIDs), len(oldIDs)

	extractCommon := func(base *diffPath, diagonal int) int {
		oldPos := base.oldPos
		newPos := oldPos - diagonal
		common := 0
		for newPos+1 < newLen && oldPos+1 < oldLen && oldIDs[oldPos+1] == newIDs[newPos+1] {
			work++
			newPos++
			oldPos++
			common++
		}
		if common > 0 {
			base.last = &component{count: common, prev: base.last}
		}
		base.oldPos = oldPos
		return newPos
	}
	addToPath := func(p *diffPath, added, removed bool, oldPosInc int) *diffPath {
		last := p.last
		if last != nil && last.added == added && last.removed == removed {
			return &diffPath{oldPos: p.oldPos + oldPosInc,
				last: &component{count: last.count + 1, added: added, removed: removed, prev: last.prev}}
		}
		return &diffPath{oldPos: p.oldPos + oldPosInc,
			last: &component{count: 1, added: added, removed: removed, prev: last}}
	}
	build := func(last *component) []run {
		var comps []*component
		for c := last; c != nil; c = c.prev {
			comps = append(comps, c)
		}
		runs := make([]run, 0, len(comps))
		newPos, oldPos := 0, 0
		for i := len(comps) - 1; i >= 0; i-- {
			c := comps[i]
			r := run{added: c.added, removed: c.removed}
			if !c.removed {
				r.lines = newTokens[newPos : newPos+c.count]
				newPos += c.count
				if !c.added {
					oldPos += c.count
				}
			} else {
				r.lines = oldTokens[oldPos : oldPos+c.count]
				oldPos += c.count
			}
			runs = append(runs, r)
		}
		return runs
	}

	maxEdit := newLen + oldLen
	// bestPath is indexed by diagonal, -maxEdit-1 … maxEdit+1.
	off := maxEdit + 1
	bestPath := make([]*diffPath, 2*maxEdit+3)
	bestPath[off] = &diffPath{oldPos: -1}
	newPos := extractCommon(bestPath[off], 0)
	if bestPath[off].oldPos+1 >= oldLen && newPos+1 >= newLen {
		return build(bestPath[off].last), work, nil
	}
	minDiag, maxDiag := -maxEdit-1, maxEdit+1
	for edit := 1; edit <= maxEdit; edit++ {
		for d := max(minDiag, -edit); d <= min(maxDiag, edit); d += 2 {
			if work++; work > maxWork {
				return nil, work, errTooComplex
			}
			removePath, addPath := bestPath[off+d-1], bestPath[off+d+1]
			if removePath != nil {
				bestPath[off+d-1] = nil
			}
			canAdd := false
			if addPath != nil {
				addNewPos := addPath.oldPos - d
				canAdd = 0 <= addNewPos && addNewPos < newLen
			}
			canRemove := removePath != nil && removePath.oldPos+1 < oldLen
			if !canAdd && !canRemove {
				bestPath[off+d] = nil
				continue
			}
			var base *diffPath
			if !canRemove || (canAdd && removePath.oldPos < addPath.oldPos) {
				base = addToPath(addPath, true, false, 0)
			} else {
				base = addToPath(removePath, false, true, 1)
			}
			newPos = extractCommon(base, d)
			if base.oldPos+1 >= oldLen && newPos+1 >= newLen {
				return build(base.last), work, nil
			}
			bestPath[off+d] = base
			if base.oldPos+1 >= oldLen {
				maxDiag = min(maxDiag, d-1)
			}
			if newPos+1 >= newLen {
				minDiag = max(minDiag, d+1)
			}
		}
	}
	// Unreachable: an edit script of length oldLen+newLen always exists.
	panic("diff: edit script longer than both inputs")
}

// hunk is one "@@" section of structuredPatch.
type hunk struct {
	oldStart, oldLines, newStart, newLines int
	lines                                  []string
}

// structuredPatch is jsdiff's structuredPatch step 1 and 2: runs → hunks
// with context lines, then "\ No newline at end of file" markers.
func structuredPatch(runs []run, context int) []hunk {
	runs = append(runs, run{}) // jsdiff appends an empty value "to make cleanup easier"
	contextLines := func(lines []string) []string {
		out := make([]string, len(lines))
		for i, l := range lines {
			out[i] = " " + l
		}
		return out
	}
	var hunks []hunk
	oldRangeStart, newRangeStart, oldLine, newLine := 0, 0, 1, 1
	var curRange []string
	for i, cur := range runs {
		lines := cur.lines
		if cur.added || cur.removed {
			if oldRangeStart == 0 {
				oldRangeStart, newRangeStart = oldLine, newLine
				if i > 0 {
					prev := runs[i-1].lines
					if context > 0 {
						curRange = contextLines(prev[max(0, len(prev)-context):])
					} else {
						curRange = nil
					}
					oldRangeStart -= len(curRange)
					newRangeStart -= len(curRange)
				}
			}
			sign := "-"
			if cur.added {
				sign = "+"
			}
			for _, l := range lines {
				curRange = append(curRange, sign+l)
			}
			if cur.added {
				newLine += len(lines)
			} else {
				oldLine += len(lines)
			}
			continue
		}
		if oldRangeStart != 0 {
			if len(lines) <= context*2 && i < len(runs)-2 {
				curRange = append(curRange, contextLines(lines)...)
			} else {
				n := min(len(lines), context)
				curRange = append(curRange, contextLines(lines[:n])...)
				hunks = append(hunks, hunk{
					oldStart: oldRangeStart, oldLines: oldLine - oldRangeStart + n,
					newStart: newRangeStart, newLines: newLine - newRangeStart + n,
					lines: curRange,
				})
				oldRangeStart, newRangeStart, curRange = 0, 0, nil
			}
		}
		oldLine += len(lines)
		newLine += len(lines)
	}
	for h := range hunks {
		in := hunks[h].lines
		out := make([]string, 0, len(in)+1)
		for _, l := range in {
			if strings.HasSuffix(l, "\n") {
				out = append(out, l[:len(l)-1])
			} else {
				out = append(out, l, `\ No newline at end of file`)
			}
		}
		hunks[h].lines = out
	}
	return hunks
}

// formatPatch is jsdiff's formatPatch with empty headers, after npm diff's
// two edits: the "====" underline removed and "\t\n" turned into "\n"
// (which also strips one tab ending any hunk line). It returns the text
// and the counts of added and removed lines.
func formatPatch(w *strings.Builder, oldName, newName string, hunks []hunk) (added, removed int) {
	var b strings.Builder
	if oldName == newName {
		b.WriteString("Index: " + oldName + "\n")
	}
	b.WriteString("--- " + oldName + "\t\n")
	b.WriteString("+++ " + newName + "\t\n")
	for _, h := range hunks {
		if h.oldLines == 0 {
			h.oldStart--
		}
		if h.newLines == 0 {
			h.newStart--
		}
		b.WriteString("@@ -" + strconv.Itoa(h.oldStart) + "," + strconv.Itoa(h.oldLines) +
			" +" + strconv.Itoa(h.newStart) + "," + strconv.Itoa(h.newLines) + " @@\n")
		for _, l := range h.lines {
			switch {
			case strings.HasPrefix(l, "+"):
				added++
			case strings.HasPrefix(l, "-"):
				removed++
			}
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	w.WriteString(strings.ReplaceAll(b.String(), "\t\n", "\n"))
	return added, removed
}
