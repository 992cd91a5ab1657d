package faultproxy

import (
	"encoding/json"
	"fmt"
	"math"
	"time"

	"go.yaml.in/yaml/v3"
)

// FaultSpec keeps time.Duration in Go; at the JSON and YAML edge the duration is an integer
// number of milliseconds named duration_ms, so a rule reads the same in both.

// faultSpecWire is FaultSpec as it travels: identical fields plus duration_ms.
type faultSpecWire struct {
	Type        string            `json:"type" yaml:"type"`
	Status      int               `json:"status,omitempty" yaml:"status,omitempty"`
	Body        string            `json:"body,omitempty" yaml:"body,omitempty"`
	ContentType string            `json:"content_type,omitempty" yaml:"content_type,omitempty"`
	JSONRPCID   bool              `json:"jsonrpc_id,omitempty" yaml:"jsonrpc_id,omitempty"`
	RetryAfter  int               `json:"retry_after,omitempty" yaml:"retry_after,omitempty"`
	Headers     map[string]string `json:"headers,omitempty" yaml:"headers,omitempty"`
	Bytes       int               `json:"bytes,omitempty" yaml:"bytes,omitempty"`
	DurationMS  float64           `json:"duration_ms,omitempty" yaml:"duration_ms,omitempty"`
	Then        string            `json:"then,omitempty" yaml:"then,omitempty"`
	Mode        string            `json:"mode,omitempty" yaml:"mode,omitempty"`
}

func (f FaultSpec) wire() faultSpecWire {
	return faultSpecWire{
		Type: f.Type, Status: f.Status, Body: f.Body, ContentType: f.ContentType, JSONRPCID: f.JSONRPCID, RetryAfter: f.RetryAfter, Headers: f.Headers, Bytes: f.Bytes,
		DurationMS: float64(f.Duration) / float64(time.Millisecond), Then: f.Then, Mode: f.Mode,
	}
}

func (w faultSpecWire) spec() (FaultSpec, error) {
	// Whole milliseconds are the documented unit; fractions are accepted (a float in
	// JSON is legal) but negative, NaN or absurd values are refused here so the error can
	// name the field.
	if math.IsNaN(w.DurationMS) || w.DurationMS < 0 || w.DurationMS > float64(math.MaxInt64/int64(time.Millisecond)) {
		return FaultSpec{}, &FieldError{Field: "fault.duration_ms", Msg: fmt.Sprintf("must be a non-negative number of milliseconds, got %v", w.DurationMS)}
	}
	return FaultSpec{
		Type: w.Type, Status: w.Status, Body: w.Body, ContentType: w.ContentType, JSONRPCID: w.JSONRPCID, RetryAfter: w.RetryAfter, Headers: w.Headers, Bytes: w.Bytes,
		Duration: time.Duration(w.DurationMS * float64(time.Millisecond)), Then: w.Then, Mode: w.Mode,
	}, nil
}

// MarshalJSON writes Duration as duration_ms.
func (f FaultSpec) MarshalJSON() ([]byte, error) { return json.Marshal(f.wire()) }

// UnmarshalJSON reads duration_ms into Duration. Unknown fields are refused so a typo in
// a parameter name is an error instead of a silently ignored parameter.
func (f *FaultSpec) UnmarshalJSON(b []byte) error {
	var w faultSpecWire
	if err := strictJSON(b, &w); err != nil {
		return err
	}
	spec, err := w.spec()
	if err != nil {
		return err
	}
	*f = spec
	return nil
}

// MarshalYAML writes Duration as duration_ms.
func (f FaultSpec) MarshalYAML() (any, error) { return f.wire(), nil }

// UnmarshalYAML reads duration_ms into Duration.
func (f *FaultSpec) UnmarshalYAML(n *yaml.Node) error {
	var w faultSpecWire
	if err := n.Decode(&w); err != nil {
		return err
	}
	spec, err := w.spec()
	if err != nil {
		return err
	}
	*f = spec
	return nil
}
