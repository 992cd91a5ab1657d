package buildinfo_test

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/internal/buildinfo"
)

func TestFromBuildInfo(t *testing.T) {
	cases := []struct {
		name     string
		version  string
		settings map[string]string
		want     string
	}{
		{"tagged module", "v1.2.3", nil, "v1.2.3 (go1.26.8)"},
		{"checkout without VCS stamp", "(devel)", nil, "devel (go1.26.8)"},
		{"checkout with VCS stamp", "(devel)", map[string]string{"vcs.revision": "c60075808e65f1e7b0a1d52f544ab83f9135c728", "vcs.modified": "true"},
			"devel (commit c60075808e65, modified, go1.26.8)"},
		{"pseudo-version", "v0.0.0-20261201084834-c60075808e65+dirty", map[string]string{"vcs.revision": "c60075808e65f1e7b0a1d52f544ab83f9135c728"},
			"devel (commit c60075808e65, modified, go1.26.8)"},
		{"pre-release after a tag", "v1.2.4-0.20261201084834-c60075808e65", nil, "devel (go1.26.8)"},
		{"release candidate", "v1.3.0-rc.1", nil, "v1.3.0-rc.1 (go1.26.8)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/idemproof/idemproof", Version: c.version}}
			for k, v := range c.settings {
				bi.Settings = append(bi.Settings, debug.BuildSetting{Key: k, Value: v})
			}
			require.Equal(t, c.want, buildinfo.FromBuildInfo(bi).String())
		})
	}
}

func TestReadDescribesThisTestBinary(t *testing.T) {
	info := buildinfo.Read()
	require.NotEmpty(t, info.GoVersion)
	require.Equal(t, buildinfo.Devel, info.Version, "a test binary is built from the checkout")
}

func TestModuleAsADependency(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "example.com/team/api", Version: "(devel)"},
		Deps: []*debug.Module{{Path: "github.com/stretchr/testify", Version: "v1.12.1"}, {Path: buildinfo.ModulePath, Version: "v0.3.1"}}}
	require.Equal(t, "v0.3.1 (go1.26.8)", buildinfo.ModuleFromBuildInfo(bi).String(), "a team's test binary importing scenarios")

	bi.Deps[1].Replace = &debug.Module{Path: "../idemproof"}
	require.Equal(t, "devel (go1.26.8)", buildinfo.ModuleFromBuildInfo(bi).String(), "a replaced module is a checkout")

	bi.Main.Path = buildinfo.ModulePath
	bi.Main.Version = "v0.4.0"
	require.Equal(t, "v0.4.0 (go1.26.8)", buildinfo.ModuleFromBuildInfo(bi).String(), "idemproof itself")
}
