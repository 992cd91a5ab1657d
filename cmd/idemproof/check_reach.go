package main

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"time"

	"github.com/idemproof/idemproof/scenarios"
)

// checkReachable dials a profile's target (or its declared proxy) once before the run.
// Without it, a profile pointing at nothing yields an UNKNOWN per scenario and, without
// --strict, exit status 0: a typo in base_url would look like a clean run.
func checkReachable(ctx context.Context, p *scenarios.Profile) error {
	field, raw := "base_url", p.BaseURL
	if p.Proxy != nil && p.Proxy.URL != "" {
		field, raw = "proxy.url", p.Proxy.URL
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return fmt.Errorf("target %s: %s %q is not an http(s) URL", p.Name, field, raw)
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	d := net.Dialer{Timeout: 5 * time.Second}
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(u.Hostname(), port))
	if err != nil {
		return fmt.Errorf("target %s: %s %s is not reachable (%v): start the target or fix %s in its profile", p.Name, field, raw, err, field)
	}
	return conn.Close()
}
