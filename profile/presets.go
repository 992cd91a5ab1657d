package profile

import (
	"embed"
	"fmt"
	"path"
	"sort"
	"strings"
)

// Built-in profiles: "reference" describes our reference server; "ietf-draft-07" and
// "stripe" are expectation presets (no target), meant for `extends:` in a user profile.
//
//go:embed profiles/*.yaml
var builtinFS embed.FS

// BuiltinNames lists the names of the built-in profiles, sorted.
func BuiltinNames() []string {
	entries, _ := builtinFS.ReadDir("profiles")
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	sort.Strings(names)
	return names
}

func builtinData(name string) ([]byte, bool) {
	data, err := builtinFS.ReadFile(path.Join("profiles", name+".yaml"))
	return data, err == nil
}

// IsPreset reports whether name is a built-in expectation preset: one that describes a
// school of idempotency (its expectations, its windows) and no target — nowhere to send
// an operation: no base_url, no operation.path, no stdio server's command — and so is
// meant for `extends:` in a user profile, never run on its own.
func IsPreset(name string) bool {
	p, err := Builtin(name)
	hasCommand := p != nil && p.IsStdio() && p.MCP != nil && len(p.MCP.Command) > 0
	return err == nil && p.Operation.Path == "" && p.BaseURL == "" && !hasCommand
}

// Builtin returns a built-in profile. The reference profile is complete and valid;
// a preset is returned as declared (its Validate reports the target fields it lacks).
func Builtin(name string) (*Profile, error) {
	data, ok := builtinData(name)
	if !ok {
		return nil, fmt.Errorf("built-in profile %q does not exist (have %s)", name, strings.Join(BuiltinNames(), ", "))
	}
	root, dups, err := parseTree(name+".yaml", ".", data, 0)
	if err != nil {
		return nil, err
	}
	p, errs, err := decodeProfile(name+".yaml", root)
	if err != nil {
		return nil, err
	}
	errs = append(dups, errs...)
	if len(errs) > 0 {
		return nil, joinFieldErrors(name+".yaml", errs, nil)
	}
	p.Source = name
	return p, nil
}
