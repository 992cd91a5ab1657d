package profile

import (
	"fmt"
	"net"

	"github.com/idemproof/idemproof/storefault"
)

// Store declares the target's key store connection (profile `store:`): the harness runs
// a store fault point (package storefault) at Listen, forwarding to Upstream, and the
// store/* scenarios and the storm switch its faults. The API is configured to reach its
// store at Listen instead of Upstream.
type Store struct {
	// Listen is where the point listens and the API's store address points: a fixed
	// host:port, or 127.0.0.1:0 when whoever starts the target starts the point too and
	// tells the API its address (Point set).
	Listen string `yaml:"listen" json:"listen"`
	// Upstream is the store's own address, host:port.
	Upstream string `yaml:"upstream" json:"upstream"`
	// Timeout is the API's own timeout on one store call, if it has one: the hang
	// scenario holds the store past it. 0: past the client timeout.
	Timeout Duration `yaml:"timeout,omitempty" json:"timeout,omitempty"`
	// Point is a point already running, started by whoever started the target (the
	// embedded reference on PostgreSQL); nil means the runner starts one at Listen.
	Point *storefault.Point `yaml:"-" json:"-"`
}

// PointConfig is the store fault point's configuration.
func (s *Store) PointConfig() storefault.Config {
	return storefault.Config{Listen: s.Listen, Upstream: s.Upstream}
}

// HangFor is how long the hang scenario holds the store: past the API's own store
// timeout when declared, else past the client's timeout, plus a margin either way.
func (s *Store) HangFor(clientTimeout Duration) Duration {
	base := clientTimeout
	if s.Timeout > 0 {
		base = s.Timeout
	}
	return base + Duration(500e6)
}

func checkStore(s *Store) []fieldError {
	if s == nil {
		return nil
	}
	var errs []fieldError
	add := func(path, format string, args ...any) {
		errs = append(errs, fieldError{Path: "store." + path, Msg: fmt.Sprintf(format, args...)})
	}
	_, listenPort, lerr := net.SplitHostPort(s.Listen)
	switch {
	case lerr != nil || listenPort == "":
		add("listen", "must be host:port, e.g. 127.0.0.1:6380 (where the API is configured to reach its key store), got %q", s.Listen)
	case listenPort == "0" && s.Point == nil:
		add("listen", "%s picks a free port the API cannot know: give the fixed address the API's store client is configured with, e.g. 127.0.0.1:6380", s.Listen)
	}
	if _, port, err := net.SplitHostPort(s.Upstream); err != nil || port == "" {
		add("upstream", "must be host:port, e.g. 127.0.0.1:6379 (the key store's own address), got %q", s.Upstream)
	} else if s.Upstream == s.Listen {
		add("upstream", "is the same address as store.listen: the point would forward to itself; give the store's own address")
	}
	if s.Timeout < 0 {
		add("timeout", "must be a positive duration such as 1s (the API's own timeout on a store call)")
	}
	return errs
}
