package lockfile

import "fmt"

// nodeBound returns an upper bound on the syntax-tree nodes a YAML or
// JSON(C) parser builds for data, without parsing it. yaml.v3 and hujson
// build a whole tree before anything is decoded, at about 200 (yaml.v3)
// and 300 (hujson) bytes of heap per node, and a node can cost as little
// as 2 bytes of input ("[a,a,a,..."), so the input's size alone does not
// bound their memory: a 4 MiB flow sequence took 430 MB.
//
// Every node is a scalar, an alias or a collection, and each is charged to
// an indicator that YAML and JSON need around it: a mapping key, its
// value and the block mapping its first key opens to the ":" (or "?")
// between them; a sequence entry, and the block sequence the first one
// opens, to its "- "; a flow collection and its first entry (a key and
// its empty value in "{a}") to its bracket, a later entry to the ","
// before it; a document and a bare scalar in it to its "---" or "...",
// the first one to the file. So ":", "?", "[" and "{" count 3, the others
// 2, plus 2 for the first document. Indicator bytes inside quoted strings and comments
// count too: the bound only overestimates (by 1.5 to 2.5 times on the
// fixtures written by pnpm, yarn and bun).
func nodeBound(data []byte) int {
	n := 2
	for i, c := range data {
		switch c {
		case ':', '?', '[', '{':
			n += 3
		case ',':
			n += 2
		case '-', '.':
			// A "-" opens an entry (and the third of "---" or "..." a
			// document) only when whitespace or the end follows it, which
			// leaves out the dashes and dots of names and versions.
			if i+1 == len(data) || isSpace(data[i+1]) {
				n += 2
			}
		}
	}
	return n
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// checkNodes refuses data whose nodeBound is over MaxNodes, before a
// tree-building parser allocates for it.
func (lim Limits) checkNodes(data []byte) error {
	if n := nodeBound(data); n > lim.MaxNodes {
		return fmt.Errorf("about %d syntax nodes, over the limit MaxNodes = %d (setting lockfile-max-nodes): %w", n, lim.MaxNodes, ErrTooLarge)
	}
	return nil
}
