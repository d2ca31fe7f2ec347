package lockfile

// depGraph links package instances for the formats that do not flag dev
// dependencies (pnpm 9, yarn, bun): an instance is Dev when only the
// roots' devDependencies reach it.
type depGraph struct {
	deps  []Dep
	edges [][]int
	prod  []int // instances that roots need for production
	dev   []int // instances that roots need for development
	// roots lists every root requirement with the folder of the importer
	// that declares it ("" for the project itself), for Tree's hoisting.
	roots []graphRoot
	// peers holds the edges that are peer dependencies, where the format
	// says so (pnpm, bun).
	peers map[[2]int]bool
	// soft holds edges Tree lays out that markDev does not follow.
	soft map[int][]int
}

// layoutOnly records an edge that Tree lays out but Dev ignores.
func (g *depGraph) layoutOnly(from, to int) {
	if g.soft == nil {
		g.soft = map[int][]int{}
	}
	g.soft[from] = append(g.soft[from], to)
}

// peer records that the edge from → to is a peer dependency.
func (g *depGraph) peer(from, to int) {
	if g.peers == nil {
		g.peers = map[[2]int]bool{}
	}
	g.peers[[2]int{from, to}] = true
}

// graphRoot is one dependency of an importer (the project root or a
// workspace folder) on instance i.
type graphRoot struct {
	dir string
	i   int
}

// add appends d and returns its index.
func (g *depGraph) add(d Dep) int {
	g.deps = append(g.deps, d)
	g.edges = append(g.edges, nil)
	return len(g.deps) - 1
}

// edge records that instance from depends on instance to.
func (g *depGraph) edge(from, to int) {
	g.edges[from] = append(g.edges[from], to)
}

// root records that a root depends on instance i, as a dev dependency or
// not.
func (g *depGraph) root(i int, dev bool) { g.rootIn("", i, dev) }

// rootIn records that the importer in folder dir ("" is the project
// root) depends on instance i.
func (g *depGraph) rootIn(dir string, i int, dev bool) {
	g.roots = append(g.roots, graphRoot{dir: dir, i: i})
	if dev {
		g.dev = append(g.dev, i)
	} else {
		g.prod = append(g.prod, i)
	}
}

// markDev sets Dev on the instances that dev roots reach and prod roots
// do not. An instance no root reaches stays not Dev: when in doubt, a
// package is assumed needed. The walk is iterative, so a long chain in a
// hostile file cannot exhaust the stack.
func (g *depGraph) markDev() {
	prod := g.reach(g.prod)
	dev := g.reach(g.dev)
	for i := range g.deps {
		g.deps[i].Dev = dev[i] && !prod[i]
	}
}

func (g *depGraph) reach(from []int) []bool {
	seen := make([]bool, len(g.deps))
	stack := append([]int(nil), from...)
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[i] {
			continue
		}
		seen[i] = true
		stack = append(stack, g.edges[i]...)
	}
	return seen
}
