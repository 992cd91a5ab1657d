package scenarios

import (
	"fmt"
	"path"
	"sort"
	"strings"
)

// Catalogue returns every scenario, sorted by ID. Each call builds fresh values, so a
// caller may change what it got.
func Catalogue() []Scenario {
	var all []Scenario
	for _, group := range [][]Scenario{
		replayScenarios(), raceScenarios(), fingerprintScenarios(), keyScenarios(),
		scopeScenarios(), storageScenarios(), expiryScenarios(), recoveryScenarios(),
		keyShapeScenarios(), keyPairScenarios(), keepAliveScenarios(), errorScenarios(), boundaryScenarios(),
		storeScenarios(),
	} {
		all = append(all, group...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].ID < all[j].ID })
	return all
}

// Lookup returns the scenario with the ID.
func Lookup(id string) (Scenario, bool) {
	for _, s := range Catalogue() {
		if s.ID == id {
			return s, true
		}
	}
	return Scenario{}, false
}

// Select returns the catalogue scenarios matching only (IDs or path.Match globs such as
// "replay/*"; empty = all) AND carrying every label in labels. A pattern that matches
// nothing is an error, so a typo never silently runs zero scenarios.
func Select(only, labels []string) ([]Scenario, error) {
	all := Catalogue()
	for _, pat := range only {
		if _, err := path.Match(pat, ""); err != nil {
			return nil, fmt.Errorf("select %q: bad pattern: %w", pat, err)
		}
		found := false
		for _, s := range all {
			if ok, _ := path.Match(pat, s.ID); ok {
				found = true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("select %q: no scenario matches (see `idemproof scenarios`)", pat)
		}
	}
	var out []Scenario
	for _, s := range all {
		if matchesAny(only, s.ID) && hasLabels(s, labels) {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("select: no scenario matches --only %s with labels %s", strings.Join(only, ","), strings.Join(labels, ","))
	}
	return out, nil
}

func matchesAny(patterns []string, id string) bool {
	if len(patterns) == 0 {
		return true
	}
	for _, p := range patterns {
		if ok, _ := path.Match(p, id); ok {
			return true
		}
	}
	return false
}

func hasLabels(s Scenario, labels []string) bool {
	for _, want := range labels {
		found := false
		for _, l := range s.Labels {
			if l == want {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}
