package profile_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/profile"
)

// capabilities is every Capability constant the package declares, read from its source,
// so that one added without a declaration entry fails here rather than going missing
// from the "what to declare next" list.
func capabilities(t *testing.T) []profile.Capability {
	t.Helper()
	pkgs, err := parser.ParseDir(token.NewFileSet(), ".", nil, parser.SkipObjectResolution)
	require.NoError(t, err)
	var out []profile.Capability
	for _, f := range pkgs["profile"].Files {
		for _, decl := range f.Decls {
			gen, ok := decl.(*ast.GenDecl)
			if !ok || gen.Tok != token.CONST {
				continue
			}
			for _, spec := range gen.Specs {
				vs := spec.(*ast.ValueSpec)
				if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Capability" {
					continue
				}
				for _, v := range vs.Values {
					lit, ok := v.(*ast.BasicLit)
					require.True(t, ok, "a Capability constant is a string literal")
					s, err := strconv.Unquote(lit.Value)
					require.NoError(t, err)
					out = append(out, profile.Capability(s))
				}
			}
		}
	}
	require.Greater(t, len(out), 20, "the capabilities were found")
	return out
}

// Every capability either names the declaration that supplies it or is a fact of the
// target, said so: Missing knows them all, and so does the declaration table.
func TestEveryCapabilityHasADeclarationEntry(t *testing.T) {
	t.Parallel()
	p, err := profile.Builtin("reference")
	require.NoError(t, err)
	for _, c := range capabilities(t) {
		require.NotEqual(t, "unknown capability "+string(c), p.Missing(c), "Missing knows %s", c)
		d, ok := profile.DeclarationFor(c)
		require.True(t, ok, "%s has no entry in the declaration table (profile/declaration.go)", c)
		require.NotEmpty(t, d.What, "%s: what the declaration gives, or which fact of the target it is", c)
		if d.Field != "" {
			named, found := profile.DeclarationNamed(d.Field)
			require.True(t, found, c)
			require.Equal(t, d, named)
		}
	}
	d, _ := profile.DeclarationFor(profile.CapMCPSessions)
	require.Empty(t, d.Field, "MCP sessions are a fact of the target, not a declaration")
}

// Undeclared names what to declare for a scenario to be judged, and nothing when a
// missing capability is a fact of the target.
func TestUndeclaredNamesTheDeclarationsAScenarioNeeds(t *testing.T) {
	t.Parallel()
	p, err := profile.Parse("p.yaml", []byte(`
name: api
base_url: http://127.0.0.1:1
operation: {method: POST, path: /r, body: '{"order_id": "{{.Entity}}", "amount": 1}'}
side_effects: {method: GET, path: "/r?order_id={{.Entity}}", count: count}
expect: {in_flight: 409, mismatch: 422, missing_key: "400"}
`))
	require.NoError(t, err)
	require.Equal(t, []string{"slow_operation", "lock_timeout"}, p.Undeclared([]profile.Capability{profile.CapSlow, profile.CapLockTimeout}))
	require.Equal(t, []string{"principals"}, p.Undeclared([]profile.Capability{profile.CapPrincipals, profile.CapKeyHeader}), "the key header is there")
	require.Nil(t, p.Undeclared([]profile.Capability{profile.CapSlow, profile.CapMCPSessions}), "no declaration gives plain HTTP MCP sessions")
	require.Nil(t, p.Undeclared([]profile.Capability{profile.CapKeyHeader}), "nothing missing")
}
