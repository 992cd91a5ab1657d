package pgstore

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestEncodeHeadersIsJSONMarshal(t *testing.T) {
	for _, h := range []map[string]string{
		nil,
		{},
		{"Content-Type": "application/json"},
		{"Location": "/v1/refunds/re_1", "Content-Type": "application/json"},
		{"B": "2", "A": "1", "C": "3", "a": "lower sorts after upper"},
		{"Content-Type": "text/html; charset=<utf-8>"},    // escaped by json: its path
		{"X": "a \"quoted\" value", "Y": `back\slash`},    // escaped by json: its path
		{"X": "tab\there", "Y": "caf\u00e9", "Z": "\xff"}, // control, non-ASCII, invalid UTF-8
		{"1": "", "2": "", "3": "", "4": "", "5": "", "6": "", "7": "", "8": ""},
		{"1": "", "2": "", "3": "", "4": "", "5": "", "6": "", "7": "", "8": "", "9": ""},
	} {
		assertSameAsMarshal(t, h)
	}
}

func FuzzEncodeHeaders(f *testing.F) {
	f.Add("Content-Type", "application/json", "Location", "/v1/refunds/re_1")
	f.Add("A", "<&>", "a", "\x00")
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2 string) {
		assertSameAsMarshal(t, map[string]string{k1: v1, k2: v2})
	})
}

func assertSameAsMarshal(t *testing.T, h map[string]string) {
	t.Helper()
	want, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	got, err := encodeHeaders(h)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("encodeHeaders(%q) = %s, json.Marshal gives %s", h, got, want)
	}
}

func BenchmarkEncodeHeaders(b *testing.B) {
	h := map[string]string{"Content-Type": "application/json", "Location": "/v1/refunds/re_0123456789abcdef01234567"}
	b.ReportAllocs()
	for b.Loop() {
		encodeHeaders(h)
	}
}
