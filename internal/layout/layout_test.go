// Package layout_test holds the project's import rules (README, "Layout") to the tree:
// each package may import only the rooms below it, so a move that makes an import climb
// fails here rather than in a review.
package layout_test

import (
	"bytes"
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const module = "github.com/idemproof/idemproof"

type pkg struct {
	ImportPath   string
	Imports      []string
	TestImports  []string
	XTestImports []string
}

// ours lists the module's packages with their imports of the module's own packages.
func ours(t *testing.T) map[string]pkg {
	t.Helper()
	out, err := exec.Command("go", "list", "-json", "../../...").Output()
	require.NoError(t, err)
	dec := json.NewDecoder(bytes.NewReader(out))
	all := map[string]pkg{}
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else {
			require.NoError(t, err)
		}
		name := rel(p.ImportPath)
		p.Imports, p.TestImports, p.XTestImports = ownOnly(p.Imports), ownOnly(p.TestImports), ownOnly(p.XTestImports)
		all[name] = p
	}
	require.Contains(t, all, "scenarios", "go list ran from the module")
	return all
}

func rel(path string) string { return strings.TrimPrefix(strings.TrimPrefix(path, module), "/") }

func ownOnly(imports []string) []string {
	var out []string
	for _, i := range imports {
		if i == module || strings.HasPrefix(i, module+"/") {
			out = append(out, rel(i))
		}
	}
	return out
}

// within reports whether path is room or below it.
func within(path, room string) bool { return path == room || strings.HasPrefix(path, room+"/") }

func TestImportsRunOneWay(t *testing.T) {
	all := ours(t)
	for name, p := range all {
		for _, imp := range p.Imports {
			switch {
			case within(name, "faultproxy") && !within(imp, "faultproxy"):
				t.Errorf("%s imports %s: faultproxy/ imports nothing of ours outside itself", name, imp)
			case within(name, "reference") && !within(imp, "reference"):
				t.Errorf("%s imports %s: reference/ imports nothing of ours outside itself", name, imp)
			case within(name, "storefault") && !within(imp, "storefault"):
				t.Errorf("%s imports %s: storefault/ imports nothing of ours outside itself", name, imp)
			case within(name, "scenarios") && within(imp, "reference"):
				t.Errorf("%s imports %s: the catalogue never imports the reference server", name, imp)
			case within(name, "scan") && (within(imp, "scenarios") || within(imp, "reference") || within(imp, "examples")):
				t.Errorf("%s imports %s: the scan learns a target from what it says of itself, never from the catalogue or a server's code", name, imp)
			case within(imp, "cmd") || within(imp, "suites"):
				t.Errorf("%s imports %s: the CLI and the suites are the top, nothing imports them", name, imp)
			}
			for _, low := range []string{"profile", "verdict", "transport", "outcome", "downstream", "internal/bodytext", "internal/jsonvalue"} {
				for _, high := range []string{"scenarios", "report", "clientcheck", "scan", "storm"} {
					if within(name, low) && within(imp, high) {
						t.Errorf("%s imports %s: %s/ sits below %s/", name, imp, low, high)
					}
				}
			}
		}
		if within(name, "clientcheck") || within(name, "retryhttp") {
			for _, imp := range append(append(p.Imports, p.TestImports...), p.XTestImports...) {
				if within(imp, "scenarios") {
					t.Errorf("%s imports %s: the client side never imports the catalogue (profile/ and verdict/ are what it shares)", name, imp)
				}
			}
		}
	}
}
