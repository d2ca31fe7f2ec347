package pathglob

import (
	"encoding/binary"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// dfa matches whole paths against a compiled regexp program by running
// it as a lazily built deterministic automaton: each state is the set of
// program positions alive after a prefix, and each transition is computed
// once and cached. Go's regexp runs the program as an NFA, paying for
// every live position at every byte: 64 patterns of 30 "**/[a-z]*"
// segments kept ~4,000 positions alive and cost 4 s on 20,000 paths.
// Paths of one package share their few state sets, so after the first
// paths a byte costs one table lookup.
//
// The cache is bounded (maxDFABytes). Paths that keep making new states
// (a window of "?" after a star, over random names) would cost more in
// building states than the NFA costs: once the cache is full, the matcher
// hands over to Go's regexp for good, as RE2 does when its DFA thrashes.
// 0.65 s of CPU became 0.08 s on 20,000 random 60-byte paths.
type dfa struct {
	src   string
	prog  *syntax.Prog
	start []uint32 // the start state's positions
	nfa   atomic.Pointer[regexp.Regexp]
	// epoch counts the times the cache was dropped: a trail's states
	// belong to one epoch.
	epoch uint32

	mu       sync.Mutex
	maxBytes int // maxDFABytes; smaller in tests
	states   []*dstate
	index    map[string]int32 // state key → index
	bytes    int              // cache size, roughly
	// scratch
	stack []uint32
	seen  []uint32 // generation per pc
	gen   uint32
	pcs   []uint32
}

// dstate is a set of program positions; next caches the transitions on
// ASCII runes (unknown, dead, or a state index + 2).
type dstate struct {
	pcs   []uint32
	match bool
	next  [utf8.RuneSelf]int32
}

const (
	unknown = 0
	dead    = 1
	// maxDFABytes bounds one matcher's cache: ~1,500 states of a small
	// program. Real requests build a few dozen.
	maxDFABytes = 1 << 20
)

// compileDFA parses re (no anchors; the whole path must match) into a
// program.
func compileDFA(re string) (*dfa, error) {
	tree, err := syntax.Parse(re, syntax.Perl|syntax.DotNL)
	if err != nil {
		return nil, err
	}
	prog, err := syntax.Compile(tree.Simplify())
	if err != nil {
		return nil, err
	}
	d := &dfa{src: re, prog: prog, maxBytes: maxDFABytes, seen: make([]uint32, len(prog.Inst))}
	d.start = d.closure(nil, uint32(prog.Start))
	d.reset()
	return d, nil
}

// reset empties the cache but for the start state, index 0.
func (d *dfa) reset() {
	d.epoch++
	d.states = nil
	d.index = map[string]int32{}
	d.bytes = 0
	d.intern(slices.Clone(d.start))
}

// match reports whether the program matches all of s.
func (d *dfa) match(s string) bool { return d.matchTrail(s, nil) }

// trail is what a walk over paths (Walk) keeps of the path it matched
// last: the state reached after each of its '/' that the automaton read,
// so that the next path resumes from the deepest folder the two share.
// A state of noneAlive says no path below that folder can match.
type trail struct {
	prev   string
	ends   []int   // offsets in prev just past a '/'
	states []int32 // the state at each end, or noneAlive
	epoch  uint32  // d.epoch the states belong to
}

// noneAlive is a trail's state past which no position is alive.
const noneAlive = -1

// matchTrail is match, resuming from and recording into t when t is not
// nil. Paths in byte order (a listing) share their folders, so after
// the first path of a folder each costs the bytes of its own name.
func (d *dfa) matchTrail(s string, t *trail) bool {
	if re := d.nfa.Load(); re != nil {
		return re.MatchString(s)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if re := d.nfa.Load(); re != nil { // handed over while this call waited
		return re.MatchString(s)
	}
	cur, i := int32(0), 0 // the start state, at the start of s
	if t != nil {
		if t.epoch != d.epoch {
			t.ends, t.states, t.epoch = t.ends[:0], t.states[:0], d.epoch
		}
		k := len(t.ends)
		for shared := commonPrefix(s, t.prev); k > 0 && t.ends[k-1] > shared; k-- {
		}
		t.ends, t.states, t.prev = t.ends[:k], t.states[:k], s
		if k > 0 {
			if cur, i = t.states[k-1], t.ends[k-1]; cur == noneAlive {
				return false
			}
		}
	}
	for i < len(s) {
		r, n := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, n = utf8.DecodeRuneInString(s[i:])
		}
		i += n
		st := d.states[cur]
		nx := int32(unknown)
		if r < utf8.RuneSelf {
			nx = st.next[r]
		}
		switch nx {
		case unknown:
			nx = d.step(st, r)
			if nx < 0 {
				if r < utf8.RuneSelf {
					d.states[cur].next[r] = dead
				}
				t.deadAfter(s, i)
				return false
			}
			if d.bytes > d.maxBytes {
				if re, err := regexp.Compile(`(?s)^(?:` + d.src + `)$`); err == nil {
					d.states, d.index = nil, nil
					d.epoch++
					d.nfa.Store(re)
					return re.MatchString(s)
				}
				// Not expected (the source parsed): drop the cache, keeping
				// the state we are in.
				pcs := d.states[nx].pcs
				d.reset()
				cur = d.intern(pcs)
				if t != nil {
					t.ends, t.states, t.epoch = t.ends[:0], t.states[:0], d.epoch
				}
			} else {
				if r < utf8.RuneSelf {
					d.states[cur].next[r] = nx + 2
				}
				cur = nx
			}
		case dead:
			t.deadAfter(s, i)
			return false
		default:
			cur = nx - 2
		}
		if r == '/' && t != nil {
			t.ends, t.states = append(t.ends, i), append(t.states, cur)
		}
	}
	return d.states[cur].match
}

// deadAfter records in t that no position is alive once s[:i] is read,
// nor for any path that shares s up to the '/' that ends s[:i] or the
// next one.
func (t *trail) deadAfter(s string, i int) {
	if t == nil {
		return
	}
	if s[i-1] == '/' {
		t.ends, t.states = append(t.ends, i), append(t.states, noneAlive)
	} else if j := strings.IndexByte(s[i:], '/'); j >= 0 {
		t.ends, t.states = append(t.ends, i+j+1), append(t.states, noneAlive)
	}
}

// commonPrefix is the length of the longest prefix a and b share.
func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// step returns the state after st reads r, or -1 for none alive.
func (d *dfa) step(st *dstate, r rune) int32 {
	d.pcs = d.pcs[:0]
	d.nextGen()
	for _, pc := range st.pcs {
		in := &d.prog.Inst[pc]
		ok := false
		switch in.Op {
		case syntax.InstRune, syntax.InstRune1:
			ok = in.MatchRune(r)
		case syntax.InstRuneAny:
			ok = true
		case syntax.InstRuneAnyNotNL:
			ok = r != '\n'
		}
		if ok {
			d.pcs = d.closureGen(d.pcs, in.Out)
		}
	}
	if len(d.pcs) == 0 {
		return -1
	}
	return d.intern(d.pcs)
}

// closure appends the positions reachable from pc without reading.
func (d *dfa) closure(dst []uint32, pc uint32) []uint32 {
	d.nextGen()
	return d.closureGen(dst, pc)
}

// nextGen starts a new set of positions in seen.
func (d *dfa) nextGen() {
	if d.gen++; d.gen == 0 {
		clear(d.seen)
		d.gen = 1
	}
}

func (d *dfa) closureGen(dst []uint32, pc uint32) []uint32 {
	d.stack = append(d.stack[:0], pc)
	for len(d.stack) > 0 {
		pc := d.stack[len(d.stack)-1]
		d.stack = d.stack[:len(d.stack)-1]
		if d.seen[pc] == d.gen {
			continue
		}
		d.seen[pc] = d.gen
		in := &d.prog.Inst[pc]
		switch in.Op {
		case syntax.InstAlt, syntax.InstAltMatch:
			d.stack = append(d.stack, in.Arg, in.Out)
		case syntax.InstNop, syntax.InstCapture, syntax.InstEmptyWidth:
			// No anchors are compiled in (EmptyWidth never occurs).
			d.stack = append(d.stack, in.Out)
		case syntax.InstFail:
		default: // runes and Match
			dst = append(dst, pc)
		}
	}
	return dst
}

// intern returns the index of the state holding pcs, adding it if new.
func (d *dfa) intern(pcs []uint32) int32 {
	slices.Sort(pcs)
	key := make([]byte, 4*len(pcs))
	for i, pc := range pcs {
		binary.LittleEndian.PutUint32(key[4*i:], pc)
	}
	if i, ok := d.index[string(key)]; ok {
		return i
	}
	st := &dstate{pcs: slices.Clip(slices.Clone(pcs))}
	for _, pc := range pcs {
		if d.prog.Inst[pc].Op == syntax.InstMatch {
			st.match = true
		}
	}
	i := int32(len(d.states))
	d.states = append(d.states, st)
	d.index[string(key)] = i
	d.bytes += 2*len(key) + len(st.next)*4 + 64
	return i
}
