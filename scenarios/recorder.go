package scenarios

import (
	"sync"
	"time"

	"github.com/idemproof/idemproof/verdict"
)

// recorder collects the history of one scenario run; attempts of a burst complete
// concurrently, so it is safe for concurrent use.
type recorder struct {
	mu  sync.Mutex
	ops []verdict.Op
}

func (r *recorder) invoke(client, attempt int, key, step string) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	r.ops = append(r.ops, verdict.Op{Index: len(r.ops), Client: client, Attempt: attempt, Type: verdict.OpInvoke, Key: key, Step: step, Time: now})
	return now
}

func (r *recorder) complete(client, attempt int, key, step string, op verdict.Op) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	op.Index, op.Client, op.Attempt, op.Key, op.Step, op.Time = len(r.ops), client, attempt, key, step, time.Now()
	r.ops = append(r.ops, op)
	return op.Time
}

func (r *recorder) history() []verdict.Op {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]verdict.Op(nil), r.ops...)
}

// firstInvoke returns when the step's first attempt was invoked.
func (r *recorder) firstInvoke(step string) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, op := range r.ops {
		if op.Step == step && op.Type == verdict.OpInvoke {
			return op.Time, true
		}
	}
	return time.Time{}, false
}

// last returns the latest event of the history.
func (r *recorder) last() verdict.Op {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.ops) == 0 {
		return verdict.Op{}
	}
	return r.ops[len(r.ops)-1]
}
