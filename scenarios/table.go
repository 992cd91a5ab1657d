package scenarios

import (
	"fmt"
	"io"
	"strings"
)

// WriteMarkdownTable writes the catalogue as the README table: ID, level, requirement,
// needs and source. docs/scenarios.md is generated with it.
func WriteMarkdownTable(w io.Writer, list []Scenario) error {
	var b strings.Builder
	b.WriteString("| ID | level | requirement | needs | source |\n|---|---|---|---|---|\n")
	for _, s := range list {
		needs := make([]string, len(s.Needs))
		for i, n := range s.Needs {
			needs[i] = string(n)
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", s.ID, s.Level, cell(s.Requirement), cell(strings.Join(needs, ", ")), cell(s.Source))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func cell(s string) string {
	if s == "" {
		return "—"
	}
	return strings.ReplaceAll(s, "|", `\|`)
}
