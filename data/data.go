// Package data embeds the data files shipped with pkgscope, so a binary
// needs no files beside it.
package data

import _ "embed"

// Popular is popular.json: the most-used npm packages, with where the
// ranking came from, how and when (see internal/popular, which parses it,
// and `indexer popular refresh`, which rewrites it).
//
//go:embed popular.json
var Popular []byte
