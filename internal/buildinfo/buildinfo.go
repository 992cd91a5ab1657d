// Package buildinfo says which idemproof a binary is, from the build information the Go
// toolchain records in every binary (runtime/debug.ReadBuildInfo): the module version
// ("v1.2.3" when built with `go install …@v1.2.3` or from a tagged release, "devel" from a
// checkout), the VCS commit when the toolchain stamped one (`go build` in a git checkout,
// unless -buildvcs=false), whether the tree had local changes, and the Go version.
//
// Nothing is injected with -ldflags: a binary built by any of the documented ways
// describes itself, and the same one-line string goes into every report.
package buildinfo

import (
	"runtime/debug"
	"strings"

	"golang.org/x/mod/module"
)

// Devel is the version of a binary built from a checkout rather than a tagged module.
const Devel = "devel"

// Info describes one build.
type Info struct {
	Version   string // "v1.2.3", or Devel
	Commit    string // full VCS revision, "" when not stamped
	Modified  bool   // the checkout had uncommitted changes
	Time      string // commit time (RFC 3339), "" when not stamped
	GoVersion string // "go1.26.8"
}

// Read describes the running binary.
func Read() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Info{Version: Devel}
	}
	return FromBuildInfo(bi)
}

// Module is the version of the idemproof module inside the running binary: the main
// module's when idemproof is the program, else the dependency's (a team's test binary
// that imports package scenarios), so reports from Go embedding name the version too.
func Module() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Info{Version: Devel}
	}
	return ModuleFromBuildInfo(bi)
}

// ModuleFromBuildInfo is Module for the build bi records.
func ModuleFromBuildInfo(bi *debug.BuildInfo) Info {
	if bi.Main.Path == ModulePath {
		return FromBuildInfo(bi)
	}
	info := Info{Version: Devel, GoVersion: bi.GoVersion}
	for _, d := range bi.Deps {
		if d.Path != ModulePath {
			continue
		}
		if d.Replace == nil && d.Version != "" && !module.IsPseudoVersion(d.Version) && d.Version != "(devel)" {
			info.Version = d.Version
		}
	}
	return info
}

// ModulePath is idemproof's module path.
const ModulePath = "github.com/idemproof/idemproof"

// FromBuildInfo describes the build bi records. A pseudo-version (v0.0.0-2026…-abcdef,
// what `go build` stamps in an untagged checkout) and "(devel)" are both Devel: only a
// tag is a version a user can install again.
func FromBuildInfo(bi *debug.BuildInfo) Info {
	info := Info{Version: Devel, GoVersion: bi.GoVersion}
	if v := bi.Main.Version; v != "" && v != "(devel)" && !module.IsPseudoVersion(strings.TrimSuffix(v, "+dirty")) {
		info.Version = strings.TrimSuffix(v, "+dirty")
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			info.Commit = s.Value
		case "vcs.modified":
			info.Modified = s.Value == "true"
		case "vcs.time":
			info.Time = s.Value
		}
	}
	if strings.HasSuffix(bi.Main.Version, "+dirty") {
		info.Modified = true
	}
	return info
}

// String is the one-line description reports and `idemproof --version` print:
//
//	v1.2.3 (go1.26.8)
//	devel (commit c600758abcde, modified, go1.26.8)
func (i Info) String() string {
	var extra []string
	if i.Commit != "" {
		extra = append(extra, "commit "+shortCommit(i.Commit))
	}
	if i.Modified {
		extra = append(extra, "modified")
	}
	if i.GoVersion != "" {
		extra = append(extra, i.GoVersion)
	}
	if len(extra) == 0 {
		return i.Version
	}
	return i.Version + " (" + strings.Join(extra, ", ") + ")"
}

func shortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}
