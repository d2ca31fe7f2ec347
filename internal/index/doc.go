// Package index is pkgscope's grep engine: a trigram index over one package
// version that covers every text byte, plus a bounded regexp scanner that
// answers grep queries from that index alone.
//
// # Why not codesearch's index
//
// google/codesearch's IndexWriter skips any file with a line over 2000 bytes,
// more than 20,000 distinct trigrams or invalid UTF-8. On npm that is most of
// the bytes (75% of next@16.4.6, 60% of lucide-react@1.81.0, 99.9% of
// @mdn/browser-compat-data), because npm ships minified one-line bundles,
// source maps and multi-megabyte JSON. Its reader also calls log.Fatal on I/O
// errors and panics on corrupt input. So this package keeps only codesearch's
// query planner (index.RegexpQuery, which turns a regexp into an AND/OR of
// trigrams) and evaluates it over a posting format of its own that indexes
// every trigram of every text file.
//
// # Blocks and groups
//
// Each text file is cut into blocks of at most BuildLimits.BlockSize bytes.
// A block ends at a line boundary when one exists in its span; only a line
// longer than a block is cut mid-line, and the block before such a cut also
// indexes the trigrams starting in the next BuildLimits.Overlap bytes. A
// posting list maps a trigram to the blocks that hold it. A run of blocks
// joined by mid-line cuts is a group; no line crosses a group boundary.
//
// A query whose matches are at most Overlap+3 bytes long (every literal and
// most fixed-width patterns) is evaluated per block: its first byte lies in
// a candidate block, so only those blocks are scanned, even inside a 20 MB
// line. A query with unbounded matches (x+, x*) is evaluated per group,
// which is sound because a match never leaves its line. Trigrams holding a
// newline are not indexed: a grep match never contains one.
//
// # Scanning
//
// Candidates are checked with Go's regexp (RE2 semantics, linear time,
// memory bounded by the program size) after the pattern is rewritten so
// that it cannot match a newline; then one call can scan many lines and
// still mean "per line". Three prefilters keep the regexp off most bytes:
//
//   - a literal every match contains ("Sync" in function\s+\w+Sync) is
//     found by its rarest byte (per-package byte counts are stored in
//     the index), and a pure literal needs no regexp at all;
//   - the pattern's alphabet (the bytes a match can hold) cuts the line
//     around a hit to the run of such bytes, which decides the line
//     exactly, so a 5 MB minified line costs a few hundred bytes of
//     regexp work per hit;
//   - without a literal, only runs of alphabet bytes at least as long as
//     the shortest match are given to the regexp (a[ab]{16}c looks at runs
//     of 18 or more a, b and c).
//
// A search stops at Timeout, at the caps on matches and output bytes, and
// when ctx is done; a regexp call too long to finish in about 0.5 s reads
// its input through a reader that checks the clock. A search allocates at
// most about MaxOutputBytes plus 4 bytes per candidate block plus the
// regexp's state (proportional to MaxProgramSize); the text itself is
// read from the mapping, never copied (or, for an index opened from its
// stored form, through its TextSource, one content at a time).
//
// # Differences from ripgrep
//
// Search reports the lines `rg -n` reports wherever Go's RE2 dialect and
// ripgrep's agree. Known differences, all of dialect or encoding: \w, \d,
// \s and \b are ASCII in Go and Unicode in ripgrep (so \bexport\b also
// matches "exportů" here), and WholeWord's word characters are ASCII too;
// . and negated classes match an invalid UTF-8 byte in Go but not in
// ripgrep; U+FFFD in a pattern matches invalid bytes in Go (such patterns
// skip the index, so the answer is still Go's); ripgrep transcodes UTF-16
// files with a byte order mark, which here are binary (they hold NULs);
// ripgrep stops at the first NUL anywhere, here only a NUL in the first
// BinarySniffBytes makes a file binary. ripgrep 13's -w matched patterns
// that start or end with a non-word character loosely (fixed in 14);
// WholeWord follows ripgrep 14.
//
// # File format (version FormatVersion, all integers little-endian)
//
//	header   16 bytes  magic "pkgsidx\x00", u32 FormatVersion, u32 0
//	text     the searchable text of every distinct text body, concatenated
//	         (a leading UTF-8 byte order mark is dropped, as ripgrep drops it)
//	paths    every path, concatenated
//	files    16 bytes each, sorted by path: u32 pathOff, u32 pathLen,
//	         u32 content, u32 0
//	contents 32 bytes each, one per distinct body, in the order of the
//	         first file holding it: u64 textOff, u64 textLen, u64 size,
//	         u32 firstBlock, u32 flags
//	keys     per content: uvarint length, then the body's key (Doc.Key,
//	         the store's hash), so the text can be found without the
//	         text section (OpenStored)
//	blocks   32 bytes each: u64 start, u64 lineStart, u32 line, u32 content,
//	         u32 group, u32 flags
//	trigrams 12 bytes each, sorted: u32 trigram, u64 postings offset
//	postings per trigram, block ids as uvarint deltas
//	counts   256 u64: how often each byte occurs in the text
//	trailer  trailerSize bytes: section offsets and lengths, counts, build
//	         settings, stats, magic "pkgsend\x00", u32 CRC-32C of every
//	         byte before it
//
// Files that hold the same bytes share one content: its text, blocks and
// postings are stored once, and a search scans it once per file that
// holds it (each file still reports its own matches). A version of 4,000
// copies of one 128 KiB body indexes to 0.2 MB instead of 517 MiB. Real
// packages repeat little: next@16.4.6 has 8,711 files and 8,398 distinct
// bodies.
//
// The store keeps an index in its stored form (StoredForm): the file
// without its text section, which is a copy of bodies the store already
// holds. lucide-react@1.81.0's index is 38.6 MB, 4.5 MB compressed; its
// stored form 8.2 MB, 1.9 MB compressed. OpenStored serves the stored
// form as it is: the caller holds it in memory, and a search reads a
// content's text through a TextSource (the store's bodies, by key) only
// when it reaches that content, so a selective grep reads a few bodies
// and no copy of the text is written.
//
// Open verifies the checksum and every table (offsets in range, blocks in
// order, trigrams sorted) before the index is used, so a corrupt or
// truncated file is an error at Open, never a panic at Search. OpenStored
// checks every table the same way but cannot check the checksum (it
// covers the absent text): its caller vouches for the bytes, and each
// body read is checked for its length, so a wrong one is an error at
// Search, never a panic. A file index is read through mmap; a published
// file must be replaced by rename, never rewritten in place (a shrinking
// mapped file faults the process).
package index
