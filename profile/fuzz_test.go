package profile_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/idemproof/idemproof/profile"
)

// FuzzParseProfile: any document either parses into a named profile or is refused with
// an error; the parser never panics (the fuzzer starts from the shipped profiles).
func FuzzParseProfile(f *testing.F) {
	for _, glob := range []string{"profiles/*.yaml", "testdata/*.yaml"} {
		paths, _ := filepath.Glob(glob)
		for _, p := range paths {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
	}
	f.Add([]byte("name: x\nbase_url: http://127.0.0.1:1\noperation: {method: POST, path: /x}\n"))
	f.Add([]byte("extends: stripe\nretention: -1s\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		// extends: may name a file, which is read whole: keep the fuzzer off device and
		// kernel files that never end (/dev/zero) or block.
		for _, dir := range []string{"/dev", "/proc", "/sys"} {
			if bytes.Contains(data, []byte(dir)) {
				return
			}
		}
		p, err := profile.Parse("fuzz.yaml", data)
		if err == nil && (p == nil || p.Name == "") {
			t.Fatalf("no error and no named profile: %#v", p)
		}
	})
}
