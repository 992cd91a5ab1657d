package profile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Defaults applied when a profile leaves a field out.
const (
	DefaultKeyHeader     = "Idempotency-Key"
	DefaultClientTimeout = Duration(2e9) // 2s
	// DefaultClientPatience is client_patience when the profile declares none.
	DefaultClientPatience = Duration(60e9) // 60s
	// DefaultRetryAfterCap is retry_after_cap when the profile declares none.
	DefaultRetryAfterCap = Duration(60e9) // 60s
)

// Load reads and validates a profile file. Errors name the file, the line and the
// field: `profile refunds.yaml: line 12: expect.mismatch: must be a 4xx status, got 200`.
// A relative `extends:` path, and a relative tls.ca_file, is resolved against the folder
// of the file that names it.
func Load(path string) (*Profile, error) {
	data, err := readProfileFile(path)
	if err != nil {
		return nil, fmt.Errorf("load profile: %w", err)
	}
	p, err := parseProfile(filepath.Base(path), filepath.Dir(path), data)
	if err != nil {
		return nil, err
	}
	p.Source = path
	return p, nil
}

// Parse parses and validates a profile; name is used in error messages (and as the
// profile's name when the document sets none). ${ENV} and ${ENV:-default} in values are
// expanded from the environment; an unset variable without a default is an error.
func Parse(name string, data []byte) (*Profile, error) {
	return parseProfile(name, ".", data)
}

func parseProfile(name, dir string, data []byte) (*Profile, error) {
	root, dups, err := parseTree(name, dir, data, 0)
	if err != nil {
		return nil, err
	}
	p, errs, err := decodeProfile(name, root)
	if err != nil {
		return nil, err
	}
	errs = append(dups, errs...)
	if p.Name == "" {
		p.Name = strings.TrimSuffix(strings.TrimSuffix(name, ".yaml"), ".yml")
	}
	// A field already reported as unreadable is not reported again as invalid.
	reported := map[string]bool{}
	for _, e := range errs {
		reported[e.Path] = true
	}
	for _, e := range p.fieldErrors() {
		if !reported[e.Path] {
			errs = append(errs, e)
		}
	}
	if len(errs) > 0 {
		return nil, joinFieldErrors(name, errs, indexLines(root))
	}
	return p, nil
}

// parseTree reads the YAML document into a mapping node with `extends:` resolved (the
// preset underneath, the document's own values on top) and ${ENV} expanded. It also
// returns the keys a mapping names twice, in this document and in the files it extends
// (duplicateKeys): decoding would keep the last one silently.
func parseTree(name, dir string, data []byte, depth int) (*yaml.Node, []fieldError, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, nil, fmt.Errorf("profile %s: %w", name, err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, nil, fmt.Errorf("profile %s: must be a YAML mapping (name: ..., base_url: ...)", name)
	}
	root := doc.Content[0]
	file := ""
	if depth > 0 {
		file = name // a file extends names: its lines are not the profile's
	}
	dups := duplicateKeys(root, "", file)
	if err := expandTree(name, root, ""); err != nil {
		return nil, nil, err
	}
	resolveTLSPaths(root, dir)
	resolveStdioDir(root, dir)
	ext := takeKey(root, "extends")
	if ext == nil {
		return root, dups, nil
	}
	if depth >= 4 {
		return nil, nil, fmt.Errorf("profile %s: line %d: extends: chain deeper than 4 presets", name, ext.Line)
	}
	base, baseDups, err := loadBase(name, dir, ext, depth)
	if err != nil {
		return nil, nil, err
	}
	dups = append(dups, baseDups...)
	// The key travels in one place: a profile that names its own placement replaces the
	// preset's, whichever of the two the preset used.
	if findKey(root, "key_header") != nil || findKey(root, "key_field") != nil {
		takeKey(base, "key_header")
		takeKey(base, "key_field")
	}
	return mergeOutcomes(mergeMappings(base, root), base, root), dups, nil
}

// duplicateKeys lists the keys a mapping under n names twice, which YAML decoding would
// let pass with the last one kept (two retention: lines, the second winning unseen).
// file names the extended file they are in ("" for the profile itself, whose lines the
// errors carry).
func duplicateKeys(n *yaml.Node, path, file string) []fieldError {
	var out []fieldError
	switch n.Kind {
	case yaml.MappingNode:
		first := map[string]int{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := joinPath(path, k.Value)
			if line, ok := first[k.Value]; !ok {
				first[k.Value] = k.Line
			} else if file == "" {
				out = append(out, fieldError{Path: p, Line: k.Line, Msg: fmt.Sprintf("is written twice (first on line %d), and only the last would count: keep one", line)})
			} else {
				out = append(out, fieldError{Path: p, Msg: fmt.Sprintf("is written twice in %s (lines %d and %d), and only the last would count: keep one", file, line, k.Line)})
			}
			out = append(out, duplicateKeys(v, p, file)...)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			out = append(out, duplicateKeys(c, path+"["+strconv.Itoa(i)+"]", file)...)
		}
	}
	return out
}

// loadBase reads what `extends:` names: a built-in preset, or a profile file.
func loadBase(name, dir string, ext *yaml.Node, depth int) (*yaml.Node, []fieldError, error) {
	if ext.Kind != yaml.ScalarNode || ext.Value == "" {
		return nil, nil, fmt.Errorf("profile %s: line %d: extends: must name a built-in profile (%s) or a file", name, ext.Line, strings.Join(BuiltinNames(), ", "))
	}
	if data, ok := builtinData(ext.Value); ok {
		return parseTree(ext.Value+".yaml", ".", data, depth+1)
	}
	if !strings.ContainsAny(ext.Value, `/\`) && !strings.HasSuffix(ext.Value, ".yaml") && !strings.HasSuffix(ext.Value, ".yml") {
		return nil, nil, fmt.Errorf("profile %s: line %d: extends: unknown built-in profile %q (have %s; or give a file path)", name, ext.Line, ext.Value, strings.Join(BuiltinNames(), ", "))
	}
	path := ext.Value
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	data, err := readProfileFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("profile %s: line %d: extends: %w", name, ext.Line, err)
	}
	return parseTree(filepath.Base(path), filepath.Dir(path), data, depth+1)
}

// maxProfileBytes bounds a profile file: a profile is a page of YAML, and a path to
// something else (a device, a log) must be an error, not a read that never ends.
const maxProfileBytes = 1 << 20

// readProfileFile reads a profile file: a regular file of at most maxProfileBytes.
func readProfileFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%s): name a profile's YAML file", path, st.Mode().Type())
	}
	data, err := io.ReadAll(io.LimitReader(f, maxProfileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxProfileBytes {
		return nil, fmt.Errorf("%s is larger than %d bytes, too large for a profile", path, maxProfileBytes)
	}
	return data, nil
}

// takeKey removes key from a mapping node and returns its value node (nil when absent).
func takeKey(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			v := m.Content[i+1]
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			return v
		}
	}
	return nil
}

// findKey returns the value node of key in a mapping node (nil when absent).
func findKey(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// mergeMappings lays over on top of base: mappings merge key by key, anything else
// (scalars, lists) in over replaces base's value.
func mergeMappings(base, over *yaml.Node) *yaml.Node {
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: over.Line, Column: over.Column}
	out.Content = append(out.Content, base.Content...)
	for i := 0; i+1 < len(over.Content); i += 2 {
		k, v := over.Content[i], over.Content[i+1]
		found := false
		for j := 0; j+1 < len(out.Content); j += 2 {
			if out.Content[j].Value != k.Value {
				continue
			}
			found = true
			if v.Kind == yaml.MappingNode && out.Content[j+1].Kind == yaml.MappingNode {
				out.Content[j+1] = mergeMappings(out.Content[j+1], v)
			} else {
				out.Content[j+1] = v
			}
			out.Content[j] = k
		}
		if !found {
			out.Content = append(out.Content, k, v)
		}
	}
	return out
}

// decodeProfile decodes the tree; the field errors are those found on the way (unknown
// fields, bad scalars), reported together with the validation's.
func decodeProfile(name string, root *yaml.Node) (*Profile, []fieldError, error) {
	wait, errs := takeInFlightWait(root)
	errs = append(errs, checkFields(root, profileType, "")...)
	var p Profile
	if err := root.Decode(&p); err != nil {
		var le *lineError
		if errors.As(err, &le) {
			return nil, nil, joinFieldErrors(name, []fieldError{{Path: pathAtLine(root, le.Line), Line: le.Line, Msg: le.Err.Error()}}, nil)
		}
		return nil, nil, fmt.Errorf("profile %s: %s", name, strings.TrimPrefix(err.Error(), "yaml: unmarshal errors:\n  "))
	}
	p.Expect.InFlightWait = wait
	p.applyDefaults()
	return &p, errs, nil
}

func (p *Profile) applyDefaults() {
	if p.KeyHeader == "" && p.KeyField == "" {
		p.KeyHeader = DefaultKeyHeader
	}
	if p.ClientTimeout == 0 {
		p.ClientTimeout = DefaultClientTimeout
	}
	if p.Transport == TransportMCP {
		p.applyMCPDefaults()
	}
	if p.Transport == TransportMCPStdio && p.MCP != nil && p.MCP.StartTimeout == 0 {
		p.MCP.StartTimeout = Duration(DefaultStartTimeout)
	}
	if p.Operation.Method == "" && p.Operation.Path != "" {
		p.Operation.Method = "POST"
	}
	if p.SideEffects.Method == "" && p.SideEffects.Path != "" {
		p.SideEffects.Method = "GET"
	}
	if p.Other != nil {
		if p.Other.Method == "" && p.Other.Path != "" {
			p.Other.Method = "POST"
		}
		if p.Other.SideEffects.Method == "" && p.Other.SideEffects.Path != "" {
			p.Other.SideEffects.Method = "GET"
		}
	}
}

// fieldError is one problem of a profile, located by its dotted field path.
type fieldError struct {
	Path string
	Line int // 0 when unknown
	Msg  string
}

func (e fieldError) String() string { return e.Path + ": " + e.Msg }

// joinFieldErrors formats every problem as "profile NAME: line N: FIELD: MESSAGE", in
// the order of the document (problems without a line, such as a missing field, first).
func joinFieldErrors(name string, errs []fieldError, lines map[string]int) error {
	located := make([]fieldError, len(errs))
	for i, e := range errs {
		if e.Line == 0 && lines != nil {
			e.Line = lineOf(lines, e.Path)
		}
		located[i] = e
	}
	sort.SliceStable(located, func(i, j int) bool { return located[i].Line < located[j].Line })
	out := make([]error, 0, len(located))
	for _, e := range located {
		prefix := ""
		if name != "" {
			prefix = "profile " + name + ": "
		}
		if e.Line > 0 {
			prefix += "line " + strconv.Itoa(e.Line) + ": "
		}
		out = append(out, errors.New(prefix+e.String()))
	}
	return errors.Join(out...)
}

// lineOf finds the line of path, or of its closest ancestor present in the document
// (a missing field is reported at its parent).
func lineOf(lines map[string]int, path string) int {
	for p := path; p != ""; {
		if l, ok := lines[p]; ok {
			return l
		}
		i := strings.LastIndexAny(p, ".[")
		if i < 0 {
			break
		}
		p = p[:i]
	}
	return 0
}

// indexLines maps every field path ("expect.mismatch", "principals[1].Authorization") to
// the line its value starts on.
func indexLines(root *yaml.Node) map[string]int {
	lines := map[string]int{}
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		if path != "" {
			lines[path] = n.Line
		}
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				walk(n.Content[i+1], joinPath(path, n.Content[i].Value))
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				walk(c, path+"["+strconv.Itoa(i)+"]")
			}
		}
	}
	walk(root, "")
	return lines
}

func joinPath(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

// pathAtLine names the deepest field whose value starts on line.
func pathAtLine(root *yaml.Node, line int) string {
	best := ""
	for p, l := range indexLines(root) {
		if l == line && len(p) > len(best) {
			best = p
		}
	}
	return best
}
