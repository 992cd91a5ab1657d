package downstream

import "context"

// SetBeforeAnswer makes the sink run f between recording a call and answering it.
func (s *Sink) SetBeforeAnswer(f func(ctx context.Context)) { s.beforeAnswer = f }
