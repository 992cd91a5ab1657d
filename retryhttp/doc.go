// Package retryhttp retries keyed, side-effecting HTTP calls the way the Idempotency-Key
// contract needs: one key per logical operation, minted BEFORE the first attempt and
// re-sent unchanged on every retry. It wraps a standard *http.Client.
//
// What is guaranteed, for one Client.Do:
//   - every attempt carries the same key and the same body bytes; the key is the
//     Operation's own (e.g. derived from the caller's id) or minted once by NewKey;
//   - transport errors (resets, timeouts, closed connections), 5xx (but 501), 429 and 409
//     are retried up to MaxAttempts with Backoff, which honours Retry-After;
//   - 422 and every other 4xx are never retried: the response is returned as is (a 422
//     means the key was reused with another payload, a client bug);
//   - when the attempts run out, or the context ends, after a request may have reached
//     the server, Do returns an *UnknownOutcomeError (errors.Is ErrUnknownOutcome): the
//     operation may or may not have happened. Report it as unknown, never as failed, and
//     retry it later with the same key (UnknownOutcomeError.Key).
//
// What is not: the server must honour the key for retries to be safe; a retry after the
// server's retention window executes anew. Go's http.Transport may itself resend a keyed
// request on a broken keep-alive connection (it treats Idempotency-Key as replayable);
// that resend carries the same key, so it is safe, but it is not counted in Attempts.
//
// Policies are named function types with documented contracts (CheckRetry, Backoff,
// KeyFunc, SleepFunc) and exported defaults, so callers can wrap them; time is injected
// through Sleep.
package retryhttp
