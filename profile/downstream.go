package profile

import (
	"fmt"
	"net"
	"strings"

	"github.com/idemproof/idemproof/downstream"
)

// DefaultSettle is how long the boundary scenarios wait, after the last answer, for
// calls a target makes to its vendor asynchronously (an outbox worker).
const DefaultSettle = Duration(2e9)

// Downstream declares the vendor a target calls (profile `downstream:`): the harness
// runs a recording sink there and the boundary scenarios judge the calls it records.
type Downstream struct {
	// Listen is where the sink listens: a fixed address the target is configured to call
	// (e.g. 0.0.0.0:9090 for a container pointed at the host), or 127.0.0.1:0 when the
	// harness starts the target itself and tells it the sink's URL (Sink set).
	Listen string `yaml:"listen" json:"listen"`
	// Admin is the admin API of a sink already running in another process
	// (`idemproof vendor --admin-listen`, e.g. in a container next to the target): the
	// runner drives it instead of starting its own; Listen then only documents where the
	// target calls it.
	Admin string `yaml:"admin,omitempty" json:"admin,omitempty"`
	// Env is the environment variable the target reads the vendor URL from, for the
	// harness that starts it (the reference server reads VENDOR_URL).
	Env string `yaml:"env,omitempty" json:"env,omitempty"`
	// KeyHeader (default Idempotency-Key) or KeyField (a JSON path into the call's
	// body) is where the target's calls carry their downstream key.
	KeyHeader string `yaml:"key_header,omitempty" json:"key_header,omitempty"`
	KeyField  string `yaml:"key_field,omitempty" json:"key_field,omitempty"`
	// Entity is a JSON path into the call's body naming the operation's entity, e.g.
	// order_id: how a call is tied to the scenario that caused it.
	Entity string `yaml:"entity" json:"entity"`
	// Settle is how long to wait after the last answer for calls still to come
	// (default 2s); a scenario that expects calls stops waiting once they went quiet.
	Settle Duration `yaml:"settle,omitempty" json:"settle,omitempty"`
	// Sink is a sink already running, started by whoever started the target (the
	// embedded reference); nil means the runner starts one at Listen.
	Sink *downstream.Sink `yaml:"-" json:"-"`
}

// SinkConfig is the downstream sink's configuration.
func (d *Downstream) SinkConfig() downstream.Config {
	return downstream.Config{Listen: d.Listen, KeyHeader: d.KeyHeader, KeyField: d.KeyField, EntityField: d.Entity}
}

func (d *Downstream) SettleTime() Duration {
	if d.Settle > 0 {
		return d.Settle
	}
	return DefaultSettle
}

func checkDownstream(d *Downstream) []fieldError {
	if d == nil {
		return nil
	}
	var errs []fieldError
	add := func(path, format string, args ...any) {
		errs = append(errs, fieldError{Path: "downstream." + path, Msg: fmt.Sprintf(format, args...)})
	}
	if d.Admin != "" {
		if msg := checkHTTPURL(d.Admin); msg != "" {
			add("admin", "%s", msg)
		}
	}
	if _, port, err := net.SplitHostPort(d.Listen); err != nil || port == "" {
		add("listen", "must be host:port, e.g. 127.0.0.1:9090 (the address the target calls as its vendor), got %q", d.Listen)
	}
	if d.Entity == "" || !validFieldPath(d.Entity) {
		add("entity", "required: a JSON path into the vendor call's body naming the operation's entity, e.g. order_id, got %q", d.Entity)
	}
	if d.KeyHeader != "" && d.KeyField != "" {
		add("key_field", "set key_header or key_field, not both")
	}
	if d.KeyHeader != "" && strings.ContainsAny(d.KeyHeader, " :\t\r\n") {
		add("key_header", "must be a header name such as Idempotency-Key, got %q", d.KeyHeader)
	}
	if d.KeyField != "" && !validFieldPath(d.KeyField) {
		add("key_field", "must be a dotted JSON path, got %q", d.KeyField)
	}
	if d.Settle < 0 {
		add("settle", "must be a positive duration such as 2s")
	}
	return errs
}
