package profile

import (
	"encoding/json"
	"fmt"
	"time"

	"go.yaml.in/yaml/v3"
)

// Std returns d as a time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }

// String writes d the way time.Duration does ("1.5s").
func (d Duration) String() string { return time.Duration(d).String() }

// MarshalYAML writes "2s" rather than an integer of nanoseconds.
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }

// UnmarshalYAML reads a Go duration string ("400ms", "24h").
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := parseDuration(n.Value)
	if err != nil {
		return &lineError{Line: n.Line, Err: err}
	}
	*d = v
	return nil
}

// MarshalJSON writes "2s".
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON reads "2s".
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration must be a string such as \"2s\": %w", err)
	}
	v, err := parseDuration(s)
	if err != nil {
		return err
	}
	*d = v
	return nil
}

func parseDuration(s string) (Duration, error) {
	v, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("must be a duration such as \"2s\" or \"400ms\", got %q", s)
	}
	if v < 0 {
		return 0, fmt.Errorf("must not be negative, got %q", s)
	}
	return Duration(v), nil
}

// lineError carries the YAML line of a value whose own unmarshaler refused it, so the
// profile loader can name the field too.
type lineError struct {
	Line int
	Err  error
}

func (e *lineError) Error() string { return e.Err.Error() }

func (e *lineError) Unwrap() error { return e.Err }
