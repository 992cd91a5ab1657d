package faultproxy_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/idemproof/idemproof/faultproxy"
)

// BenchmarkKeyFieldRead is the proxy's reading of a key field from a buffered body — the
// nesting scan, gjson's validation and the walk to the key, with every object on the path
// read whole for a repeated name — per body shape and size: its cost is linear in the
// bytes (the same MB/s at 64 KiB and 10 MiB), and a body nested past MaxJSONDepth is
// refused after its first levels.
//
//	go test -run '^$' -bench BenchmarkKeyFieldRead -benchtime 20x ./faultproxy/
func BenchmarkKeyFieldRead(b *testing.B) {
	const field = "params.arguments.idempotency_key"
	shapes := map[string]func(n int) string{
		// Members, arrays and strings after the key, in the object the key is in.
		"members": func(n int) string {
			var s strings.Builder
			s.WriteString(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"idempotency_key":"k","data":[`)
			for s.Len() < n {
				s.WriteString(`{"a":1,"b":"xyz","c":[true,null,2.5]},`)
			}
			s.WriteString(`0]}}}`)
			return s.String()
		},
		// Nesting at the limit, over and over.
		"nested-at-limit": func(n int) string {
			depth := faultproxy.MaxJSONDepth - 4
			one := strings.Repeat("[", depth) + strings.Repeat("]", depth)
			return `{"params":{"arguments":{"idempotency_key":"k","pad":[` +
				strings.Repeat(one+",", max(n/len(one), 1)) + `0]}}}`
		},
		// The issue-38 body: nested far past the limit, refused.
		"nested-past-limit": func(n int) string {
			return `{"params":{"arguments":{"pad":` + strings.Repeat("[", n/2) + strings.Repeat("]", n/2) + `,"idempotency_key":"k"}}}`
		},
	}
	for _, shape := range []string{"members", "nested-at-limit", "nested-past-limit"} {
		for _, size := range []int{64 << 10, 1 << 20, 10 << 20} {
			body := []byte(shapes[shape](size))
			b.Run(fmt.Sprintf("%s/%dKiB", shape, size>>10), func(b *testing.B) {
				b.SetBytes(int64(len(body)))
				b.ReportAllocs()
				for b.Loop() {
					key, ok, refused := faultproxy.ReadKeyField(body, field)
					if (shape == "nested-past-limit") != (refused != "") || (refused == "" && (!ok || key != "k")) {
						b.Fatalf("key %q %v, refused %q", key, ok, refused)
					}
				}
			})
		}
	}
}
