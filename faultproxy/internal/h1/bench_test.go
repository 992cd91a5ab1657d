package h1_test

import (
	"testing"

	"github.com/idemproof/idemproof/faultproxy/internal/h1"
)

// typicalAnswer is the answer a payment API gives to keyedPOST.
const typicalAnswer = "HTTP/1.1 201 Created\r\n" +
	"Content-Type: application/json; charset=utf-8\r\n" +
	"Date: Tue, 03 Mar 2026 10:15:00 GMT\r\n" +
	"Idempotency-Key: 8f14e45f-ceea-467f-a0e6-a1b2c3d4e5f6\r\n" +
	"Request-Id: req_9a8b7c6d5e4f3a2b\r\n" +
	"Cache-Control: no-cache, no-store\r\n" +
	"Strict-Transport-Security: max-age=63072000\r\n" +
	"Connection: keep-alive\r\n" +
	"Content-Length: 42\r\n" +
	"\r\n"

func BenchmarkParseRequest(b *testing.B) {
	buf := []byte(keyedPOST)
	r := h1.Request{Fields: make([]h1.Field, 0, h1.MaxFields)}
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		if h1.ParseRequest(buf, testMaxHead, &r) != h1.Complete {
			b.Fatal("not complete")
		}
	}
}

func BenchmarkParseResponse(b *testing.B) {
	buf := []byte(typicalAnswer)
	r := h1.Response{Fields: make([]h1.Field, 0, h1.MaxFields)}
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		if h1.ParseResponse(buf, testMaxHead, false, &r) != h1.Complete {
			b.Fatal("not complete")
		}
	}
}

// TestParseAllocatesNothing keeps the benchmarks' promise in the ordinary test run.
func TestParseAllocatesNothing(t *testing.T) {
	req := h1.Request{Fields: make([]h1.Field, 0, h1.MaxFields)}
	resp := h1.Response{Fields: make([]h1.Field, 0, h1.MaxFields)}
	reqBuf, respBuf := []byte(keyedPOST), []byte(typicalAnswer)
	if n := testing.AllocsPerRun(100, func() { h1.ParseRequest(reqBuf, testMaxHead, &req) }); n != 0 {
		t.Fatalf("ParseRequest allocates %v times", n)
	}
	if n := testing.AllocsPerRun(100, func() { h1.ParseResponse(respBuf, testMaxHead, false, &resp) }); n != 0 {
		t.Fatalf("ParseResponse allocates %v times", n)
	}
}
