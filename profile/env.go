package profile

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// envRef matches ${NAME} and ${NAME:-default}. A literal "$" elsewhere is left alone, so
// bodies and paths need no escaping.
var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}`)

// ExpandEnv replaces ${NAME} / ${NAME:-default}; an unset (or empty, without a default)
// variable is an error naming it, because a silently empty token makes every request fail
// with a confusing 401.
func ExpandEnv(s string) (string, error) {
	var missing []string
	out := envRef.ReplaceAllStringFunc(s, func(m string) string {
		g := envRef.FindStringSubmatch(m)
		if v, ok := os.LookupEnv(g[1]); ok && v != "" {
			return v
		}
		if g[2] != "" {
			return g[3]
		}
		missing = append(missing, g[1])
		return m
	})
	if len(missing) > 0 {
		return s, fmt.Errorf("environment variable %s is not set (export it, or write ${%s:-default})", missing[0], missing[0])
	}
	return out, nil
}

// expandTree expands every scalar value (never keys) in place and reports each failure
// with its field and line.
func expandTree(name string, n *yaml.Node, path string) error {
	var errs []error
	switch n.Kind {
	case yaml.ScalarNode:
		v, err := ExpandEnv(n.Value)
		if err != nil {
			return fmt.Errorf("profile %s: line %d: %s: %w", name, n.Line, path, err)
		}
		n.Value = v
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			errs = append(errs, expandTree(name, n.Content[i+1], joinPath(path, n.Content[i].Value)))
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			errs = append(errs, expandTree(name, c, path+"["+strconv.Itoa(i)+"]"))
		}
	}
	return errors.Join(errs...)
}
