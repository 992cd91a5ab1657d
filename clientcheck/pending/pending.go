// Package pending keeps a client's logical operations across its own restarts, in the
// state folder client-check exports ($IDEMPROOF_STATE_DIR): what an agent harness needs
// so that "the key survives the client". An operation's key is minted once and kept
// before its first attempt, so a client restarted mid-call retries it under the same key;
// its final outcome is kept in the key's place, so a restarted client resumes its work
// and does not redo an operation it already settled.
//
//	dir := pending.FromEnv()                       // nothing kept outside client-check
//	if done, ok := dir.Settled("order-7"); ok { … } // settled by an earlier run: skip it
//	key, err := dir.Key("order-7", newKey)         // kept before the first attempt
//	…                                              // the attempts, all under key
//	dir.Settle(outcome.Line{Operation: "order-7", Outcome: "ok", Key: key})
//
// A key is written to a temporary file renamed into place, so a client killed while it
// writes leaves the old state or the new, never half a key. An empty folder keeps nothing:
// Key mints a new key every time it is asked and Settled knows nothing.
package pending

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/idemproof/idemproof/clientcheck/outcome"
)

// EnvStateDir names the variable client-check exports the state folder in.
const EnvStateDir = "IDEMPROOF_STATE_DIR"

// Dir is a state folder ("": none).
type Dir struct{ path string }

// FromEnv is the state folder client-check exports (none outside client-check).
func FromEnv() Dir { return Open(os.Getenv(EnvStateDir)) }

// Open is the state folder at path ("": none).
func Open(path string) Dir { return Dir{path: path} }

// file names an operation's file: a hash, so any operation name is a safe file name.
func (d Dir) file(kind, operation string) string {
	sum := sha256.Sum256([]byte(operation))
	return filepath.Join(d.path, kind+"-"+hex.EncodeToString(sum[:12]))
}

// Key is the operation's key: the one kept by an earlier run, else mint's, kept before
// it is returned (so before the first attempt that sends it).
func (d Dir) Key(operation string, mint func() string) (string, error) {
	if d.path == "" {
		return mint(), nil
	}
	path := d.file("key", operation)
	if b, err := os.ReadFile(path); err == nil && len(b) > 0 {
		return string(b), nil
	}
	key := mint()
	if err := writeFile(path, []byte(key)); err != nil {
		return "", fmt.Errorf("keep the key of %s: %w", operation, err)
	}
	return key, nil
}

// Settle keeps the operation's final outcome in its key's place.
func (d Dir) Settle(l outcome.Line) error {
	if d.path == "" {
		return nil
	}
	b, err := json.Marshal(l)
	if err != nil {
		return err
	}
	if err := writeFile(d.file("done", l.Operation), b); err != nil {
		return fmt.Errorf("keep the outcome of %s: %w", l.Operation, err)
	}
	if err := os.Remove(d.file("key", l.Operation)); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}

// Settled is the outcome an earlier run settled the operation with.
func (d Dir) Settled(operation string) (outcome.Line, bool) {
	if d.path == "" {
		return outcome.Line{}, false
	}
	var l outcome.Line
	b, err := os.ReadFile(d.file("done", operation))
	if err != nil || json.Unmarshal(b, &l) != nil {
		return outcome.Line{}, false
	}
	return l, true
}

func writeFile(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
