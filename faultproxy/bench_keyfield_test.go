package faultproxy_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/idemproof/idemproof/faultproxy"
)

// BenchmarkHandlerKeyField is the proxy's own cost per attempt when the key is a field of
// a JSON-RPC body (--key-field), for a small tool call and one with a 64 KiB argument
// after the key (the scan stops at the key; a decode would read it all):
//
//	go test -run '^$' -bench BenchmarkHandlerKeyField -benchmem ./faultproxy/
func BenchmarkHandlerKeyField(b *testing.B) {
	for name, filler := range map[string]string{"small": "", "64KiB-after-key": strings.Repeat("x", 64<<10)} {
		b.Run(name, func(b *testing.B) {
			p, err := faultproxy.New(faultproxy.Config{Upstream: "http://127.0.0.1:1", Transport: cannedTransport{},
				KeyField: "params.arguments.idempotency_key"})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			cpu := startCPU()
			defer cpu.report(b)
			b.RunParallel(func(pb *testing.PB) {
				i := 0
				for pb.Next() {
					i++
					body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"refund","arguments":{"idempotency_key":"k-` +
						strconv.Itoa(i%1000) + `","order_id":"o-1","amount":4900,"note":"` + filler + `"}}}`
					req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
					w := httptest.NewRecorder()
					p.ServeHTTP(w, req)
					if w.Code != http.StatusCreated {
						b.Fatalf("status %d", w.Code)
					}
				}
			})
		})
	}
}
