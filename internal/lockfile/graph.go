package lockfile

// depGraph links package instances for the formats that do not flag dev
// dependencies (pnpm 9, yarn, bun): an instance is Dev when only the
// roots' devDependencies reach it.
type depGraph struct {
	deps  []Dep
	edges [][]int
	prod  []int // instances that roots need for production
	dev   []int // instances that roots need for development
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
func (g *depGraph) root(i int, dev bool) {
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
