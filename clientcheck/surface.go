package clientcheck

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"

	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/profile"
)

// surface is where the code under test meets the faults: the front and the fault proxy
// in front of an HTTP target (an API, an MCP server over Streamable HTTP), or the stdio
// fault layer behind a shim command (an MCP server over stdio).
type surface struct {
	ctl     faultproxy.Controller
	base    string   // what the client sends to (HTTP); "" over stdio
	admin   string   // the admin API's URL
	command []string // the server command the client starts (stdio); nil over HTTP
	// ledger, when set, replaces the run's ledger reader: over stdio it reads through
	// the fault layer, which starts the server.
	ledger *ledgerReader
	// drain stops taking attempts and waits for those still in flight to be journaled.
	drain func()
	close func()
}

// openHTTPSurface puts the front and the fault proxy in front of the profile's base URL.
func openHTTPSurface(p *profile.Profile, tc *tls.Config, fr *front, rules []faultproxy.Rule, seed int64, restarts *restarter, lifetime context.Context) (*surface, error) {
	upstream := faultproxy.NewTransport(false)
	if tc != nil {
		upstream.TLSClientConfig = tc.Clone()
	}
	proxy, err := faultproxy.New(faultproxy.Config{
		Upstream:  p.BaseURL,
		KeyHeader: p.KeyHeader,
		KeyField:  p.KeyField,
		Seed:      seed,
		Rules:     rules,
		Transport: restartTransport{next: stripInternal{upstream}, restarter: restarts, front: fr, lifetime: lifetime},
	})
	if err != nil {
		return nil, fmt.Errorf("start proxy: %w", err)
	}
	fr.next = proxy
	frontSrv, err := serve(fr)
	if err != nil {
		proxy.CloseIdleConnections()
		return nil, err
	}
	// One connection per request: a client's HTTP stack resends by itself a request that
	// breaks on a reused keep-alive connection before its answer (Go's net/http does for
	// any request with Idempotency-Key), below every retry loop, so a reset or a hold on
	// a reused connection would test net/http's resend instead of the client's own retry
	// code. On a fresh connection the stack has no reason to resend, and only the
	// client's code can retry.
	frontSrv.srv.SetKeepAlivesEnabled(false)
	admin, err := serve(proxy.AdminHandler(""))
	if err != nil {
		frontSrv.Close()
		proxy.CloseIdleConnections()
		return nil, err
	}
	return &surface{
		ctl: proxy, base: "http://" + frontSrv.Addr, admin: "http://" + admin.Addr,
		drain: frontSrv.Close,
		close: func() { frontSrv.Close(); admin.Close(); proxy.CloseIdleConnections() },
	}, nil
}

// jsonArgv is an argv as the JSON array the environment carries ("" for none).
func jsonArgv(argv []string) string {
	if len(argv) == 0 {
		return ""
	}
	b, _ := json.Marshal(argv)
	return string(b)
}
