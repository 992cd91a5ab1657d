package idempotency

import (
	"context"
	"sync"
)

// unit is the work of one request: the effects the handler staged and whether it
// rejected the request before executing anything.
type unit struct {
	mu          sync.Mutex
	effects     []Effect
	notExecuted bool
}

type unitKey struct{}

func withUnit(ctx context.Context, u *unit) context.Context {
	return context.WithValue(ctx, unitKey{}, u)
}

// Stage records effects the middleware will commit together with the response. A
// handler not wrapped by the middleware gets false and must not claim success.
func Stage(ctx context.Context, effects ...Effect) bool {
	u, ok := ctx.Value(unitKey{}).(*unit)
	if !ok {
		return false
	}
	u.mu.Lock()
	u.effects = append(u.effects, effects...)
	u.mu.Unlock()
	return true
}

// NotExecuted tells the middleware that the request was rejected before any work (a
// validation error): its response is not stored and the key is released, so the
// corrected request may reuse the key.
func NotExecuted(ctx context.Context) {
	if u, ok := ctx.Value(unitKey{}).(*unit); ok {
		u.mu.Lock()
		u.notExecuted = true
		u.mu.Unlock()
	}
}

func (u *unit) result() ([]Effect, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.effects, u.notExecuted
}
