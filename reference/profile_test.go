package reference_test

import (
	"testing"
	"time"

	"github.com/idemproof/idemproof/reference"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

func TestProfileDeclaresWhatTheServerDoes(t *testing.T) {
	var p struct {
		BaseURL     string `yaml:"base_url"`
		Retention   string `yaml:"retention"`
		LockTimeout string `yaml:"lock_timeout"`
		Expect      struct {
			InFlight int `yaml:"in_flight"`
			Mismatch int `yaml:"mismatch"`
		} `yaml:"expect"`
		Operation struct {
			Path string `yaml:"path"`
		} `yaml:"operation"`
	}
	require.NoError(t, yaml.Unmarshal(reference.Profile("http://127.0.0.1:4321/"), &p))
	require.Equal(t, "http://127.0.0.1:4321", p.BaseURL)
	require.Equal(t, reference.ProfileRetention.String(), mustParse(t, p.Retention).String())
	require.Equal(t, reference.ProfileLockTimeout.String(), mustParse(t, p.LockTimeout).String())
	require.Equal(t, 409, p.Expect.InFlight)
	require.Equal(t, 422, p.Expect.Mismatch)
	require.Equal(t, "/v1/refunds", p.Operation.Path)

	require.NoError(t, yaml.Unmarshal(reference.Profile(""), &p))
	require.Equal(t, "http://127.0.0.1:8080", p.BaseURL)
}

func mustParse(t *testing.T, s string) time.Duration {
	t.Helper()
	d, err := time.ParseDuration(s)
	require.NoError(t, err)
	return d
}
