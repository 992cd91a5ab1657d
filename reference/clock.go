package reference

import (
	"sync"
	"time"
)

// ManualClock is a clock tests move by hand, so windows and lock timeouts are crossed
// without sleeping. Pass its Now to WithClock.
type ManualClock struct {
	mu  sync.Mutex
	now time.Time
}

// NewManualClock starts a clock at t.
func NewManualClock(t time.Time) *ManualClock { return &ManualClock{now: t} }

// Now returns the clock's time.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *ManualClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}
