package reference

import (
	_ "embed"
	"strings"
	"time"
)

//go:embed profile.yaml
var profileYAML string

// Settings the shipped profile declares; ProfileOptions configures a server to match.
const (
	ProfileRetention   = 2 * time.Second
	ProfileLockTimeout = time.Second
	profileBaseURL     = "http://127.0.0.1:8080"
)

// Profile returns the reference server's target profile (YAML, see DESIGN.md "Target
// profile") with base_url set to baseURL ("" keeps http://127.0.0.1:8080).
func Profile(baseURL string) []byte {
	if baseURL == "" {
		return []byte(profileYAML)
	}
	return []byte(strings.Replace(profileYAML, "base_url: "+profileBaseURL, "base_url: "+strings.TrimRight(baseURL, "/"), 1))
}

// ProfileOptions are the options under which the server behaves as Profile declares:
// test hooks on, retention ProfileRetention, lock timeout ProfileLockTimeout.
func ProfileOptions() []Option {
	return []Option{WithTestHooks(true), WithRetention(ProfileRetention), WithLockTimeout(ProfileLockTimeout)}
}
