package lockfile

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// yamlMap is a map[string]V decoded from YAML in linear time. yaml.v3
// checks a mapping's keys for duplicates by comparing every pair
// (decoder.mapping), so a 28,000-key "packages" took 6 s of CPU and the
// 200,000 keys that fit in a few MiB would take hours; this decodes the
// pairs itself, finding duplicates with a Go map.
type yamlMap[V any] map[string]V

// UnmarshalYAML implements yaml.Unmarshaler. Keys are scalars; a
// duplicate key is an error, as yaml.v3 makes it.
func (m *yamlMap[V]) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		if n.ShortTag() == "!!null" {
			*m = nil
			return nil
		}
		return fmt.Errorf("line %d: want a mapping, not a %s", n.Line, kindName(n))
	}
	out := make(yamlMap[V], len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return fmt.Errorf("line %d: a mapping key is a %s, not a string", k.Line, kindName(k))
		}
		if _, dup := out[k.Value]; dup {
			return fmt.Errorf("line %d: mapping key %q already defined", k.Line, truncate(k.Value))
		}
		var val V
		if err := v.Decode(&val); err != nil {
			return err
		}
		out[k.Value] = val
	}
	*m = out
	return nil
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "sequence"
	case yaml.MappingNode:
		return "mapping"
	case yaml.AliasNode:
		return "alias"
	case yaml.DocumentNode:
		return "document"
	}
	return "scalar " + n.ShortTag()
}

// noAliases refuses a YAML tree holding an alias (*name). Neither pnpm nor
// yarn writes anchors, and each alias decoded copies what it names again,
// which nodeBound cannot see: a few bytes of "*big" per entry would
// expand to a map of thousands of entries each. Checked before decoding.
func noAliases(n *yaml.Node) error {
	stack := []*yaml.Node{n}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n.Kind == yaml.AliasNode {
			return fmt.Errorf("%w: line %d: a YAML alias (*%s); lockfiles never use anchors", ErrInvalid, n.Line, truncate(n.Value))
		}
		stack = append(stack, n.Content...)
	}
	return nil
}
