package refunds

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"time"
)

// state is everything the server keeps: the idempotency records and the ledger.
type state struct {
	Keys      map[string]*entry   `json:"keys"`
	Refunds   map[string][]Refund `json:"refunds"` // by order id
	Next      int                 `json:"next"`
	LastSweep time.Time           `json:"last_sweep,omitzero"`
}

func newState() *state { return &state{Keys: map[string]*entry{}, Refunds: map[string][]Refund{}} }

// store holds the state in memory, or in a file (Config.StateFile) so that keys and
// refunds survive a restart of the server — a stdio server is restarted whenever its
// host restarts it, or it crashes — and are shared by every server process on the host
// (an agent host may run several). Every change is one critical section: in memory under
// a mutex; in the file under an exclusive flock, the file read, changed and written back
// (to a temporary file renamed over it, so a crash never leaves half a state).
type store struct {
	path string
	mu   sync.Mutex
	mem  *state
}

func newStore(path string) *store {
	if path == "" {
		return &store{mem: newState()}
	}
	return &store{path: path}
}

// update runs fn on the state in one critical section and keeps what it changed. An
// error means the state file could not be read or written: the caller answers with a
// server error, and nothing changed.
func (s *store) update(fn func(*state)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.path == "" {
		fn(s.mem)
		return nil
	}
	lock, err := os.OpenFile(s.path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("state: %w", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("state: lock: %w", err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) //nolint:errcheck // closing the file unlocks it too
	st, err := s.read()
	if err != nil {
		return err
	}
	fn(st)
	return s.write(st)
}

func (s *store) read() (*state, error) {
	f, err := os.Open(s.path)
	if errors.Is(err, os.ErrNotExist) {
		return newState(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("state: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("state: %w", err)
	}
	st := newState()
	if len(b) > 0 {
		if err := json.Unmarshal(b, st); err != nil {
			return nil, fmt.Errorf("state %s: %w", s.path, err)
		}
	}
	return st, nil
}

func (s *store) write(st *state) error {
	b, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("state: %w", err)
	}
	tmp := s.path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("state: %w", err)
	}
	if f, err := os.Open(tmp); err == nil {
		f.Sync() //nolint:errcheck // best effort: the rename below is what must not tear
		f.Close()
	}
	if err := os.Rename(tmp, s.path); err != nil {
		return fmt.Errorf("state: %w", err)
	}
	return nil
}

// pid is this process, the owner of the work it runs.
var pid = os.Getpid()

// alive reports whether the process that owns a running record still runs: a record
// left running by a process that died is no longer in flight.
func alive(owner int) bool {
	if owner == 0 || owner == pid {
		return true
	}
	err := syscall.Kill(owner, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
