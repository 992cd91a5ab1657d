package pgstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/idemproof/idemproof/reference/idempotency"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

var _ idempotency.LocalStore = (*Store)(nil)

// lockID is the scope's transaction-lock key: the first 8 bytes of its hash. Two scopes
// sharing one would only answer each other 409 now and then, never mix records.
func lockID(h idempotency.ScopeHash) int64 { return int64(binary.BigEndian.Uint64(h[:8])) }

// The one-transaction statements, index as completeQueries: newKeyQueries for the common
// case, a key without a row, and localQueries for everything else.
//
// The lock comes first, so it is held before the write. Under READ COMMITTED the
// statement's snapshot is older than its lock: a key row another transaction committed
// in between is invisible here, so the key is not looked up by a SELECT but written with
// ON CONFLICT, which checks the latest committed row (waiting for an uncommitted one).
// When the key row is not written the effects are not inserted either, and CommitLocal
// reads what the live record says.
//
// newKeyQueries writes the key row only where no row has the scope (ON CONFLICT DO
// NOTHING) and reports nothing but the rows it inserted: PostgreSQL sets up and runs it
// for markedly less work than localQueries (no update clause, no result row), and a
// request's first attempt is what a server mostly sees. localQueries also overwrites a
// row where Decide would acquire it, past the window or a stale two-phase lock with the
// same fingerprint, and reports whether the lock was held.
//
// The row's fence is 0, a token the sequence never hands out, and it is written
// completed: no two-phase holder's Complete can match it (that needs its own fence and an
// uncompleted row), so it draws no token from the sequence, which every concurrent
// request would otherwise contend for.
var newKeyQueries, localQueries [3]string

func init() {
	const (
		columns = `(scope_hash, principal, endpoint, idempotency_key, fingerprint,
				created_at, expires_at, locked_until, fence, completed, response_status, response_headers, response_body)`
		values = `$1::bytea, $3::text, $4::text, $5::text, $6::text, $7::timestamptz, $8::timestamptz, NULL,
				0, true, $9::integer, $10::bytea, $11::bytea`
	)
	for n := range 3 {
		key := `INSERT INTO idempotency_keys ` + columns + `
			SELECT ` + values + ` WHERE pg_try_advisory_xact_lock($2::bigint)
			ON CONFLICT (scope_hash) DO NOTHING`
		newKeyQueries[n] = key
		if n > 0 {
			// The rows the statement reports are the effects': none unless the key was written.
			newKeyQueries[n] = `WITH k AS (` + key + ` RETURNING 1) ` + insertEffects(n, 12, `WHERE EXISTS (SELECT 1 FROM k)`)
		}

		q := `WITH l AS (SELECT pg_try_advisory_xact_lock($2::bigint) AS held),
		k AS (
			INSERT INTO idempotency_keys AS o ` + columns + `
			SELECT ` + values + ` FROM l WHERE l.held
			ON CONFLICT (scope_hash) DO UPDATE SET fingerprint = EXCLUDED.fingerprint,
				created_at = CASE WHEN o.expires_at <= EXCLUDED.created_at THEN EXCLUDED.created_at ELSE o.created_at END,
				expires_at = CASE WHEN o.expires_at <= EXCLUDED.created_at THEN EXCLUDED.expires_at ELSE o.expires_at END,
				locked_until = NULL, fence = EXCLUDED.fence, completed = true, response_status = EXCLUDED.response_status,
				response_headers = EXCLUDED.response_headers, response_body = EXCLUDED.response_body
			WHERE o.expires_at <= EXCLUDED.created_at
				OR (o.fingerprint = EXCLUDED.fingerprint AND NOT o.completed AND o.locked_until <= EXCLUDED.created_at)
			RETURNING 1
		)`
		if n > 0 {
			q += `, ins AS (` + insertEffects(n, 12, `WHERE EXISTS (SELECT 1 FROM k)`) + `)`
		}
		localQueries[n] = q + ` SELECT l.held, (SELECT count(*) FROM k) FROM l`
	}
}

// CommitLocal implements idempotency.LocalStore: one statement when inTx is nil (see
// newKeyQueries), the same statement after BEGIN in one round trip otherwise, inTx
// between it and the COMMIT.
func (s *Store) CommitLocal(ctx context.Context, req idempotency.AcquireRequest, resp idempotency.Response, effects []idempotency.Effect, inTx func()) (idempotency.Acquisition, error) {
	req.Now = micro(req.Now)
	headers, err := encodeHeaders(resp.Header)
	if err != nil {
		return idempotency.Acquisition{}, fmt.Errorf("encode headers: %w", err)
	}
	body := resp.Body
	if body == nil {
		body = []byte{}
	}
	sc := req.Scope
	h := sc.Hash()
	_, fresh := idempotency.Decide(nil, req, 0)
	args := appendEffectArgs(append(make([]any, 0, 11+effectArgs), h[:], lockID(h), sc.Principal, sc.Endpoint, sc.Key,
		fresh.Fingerprint, fresh.Created, fresh.ExpiresAt, resp.Status, headers, body), effects)
	n := shape(effects)
	outcome, err := s.commitLocalOnce(ctx, newKeyQueries[n], true, args, inTx)
	if err != nil {
		return idempotency.Acquisition{}, err
	}
	if outcome == localWritten {
		return idempotency.Acquisition{State: idempotency.Acquired}, nil
	}
	// A row has the key, or another transaction holds its lock: the live row answers a
	// repeat (replay, mismatch, a two-phase lock in flight) in one more statement.
	if acq, done, err := s.decideExisting(ctx, req); err != nil || done {
		return acq, err
	}
	// No live row, or one Decide would take over. The write can lose to a record that
	// then vanishes (a two-phase key released), hence the bounded loop; each round is a
	// new statement with a new snapshot.
	for range 5 {
		outcome, err := s.commitLocalOnce(ctx, localQueries[n], false, args, inTx)
		if err != nil {
			return idempotency.Acquisition{}, err
		}
		switch outcome {
		case localNotHeld:
			return idempotency.Acquisition{State: idempotency.InFlight}, nil
		case localWritten:
			return idempotency.Acquisition{State: idempotency.Acquired}, nil
		}
		if acq, done, err := s.decideExisting(ctx, req); err != nil || done {
			return acq, err
		}
	}
	return idempotency.Acquisition{}, errors.New("commit request: the key's record kept changing under the transaction; retry")
}

// decideExisting reads the key's live record after a statement did not write it: done
// with the answer it gives, or not done when the statement should be tried again.
func (s *Store) decideExisting(ctx context.Context, req idempotency.AcquireRequest) (acq idempotency.Acquisition, done bool, err error) {
	existing, ok, err := s.Lookup(ctx, req.Scope, req.Now)
	if err != nil {
		return idempotency.Acquisition{}, false, err
	}
	var found *idempotency.Record
	if ok {
		found = &existing
	}
	state, retry := idempotency.DecideLocal(found, req)
	return idempotency.Acquisition{State: state, Record: existing}, !retry, nil
}

// localOutcome is what one of the one-transaction statements did.
type localOutcome int

const (
	// localWritten: the key row and the effects were committed.
	localWritten localOutcome = iota
	// localNotHeld: another transaction holds the key's lock (localQueries only).
	localNotHeld
	// localNotWritten: nothing was written; for newKeyQueries also when the lock was held.
	localNotWritten
)

// commitLocalOnce runs query, one of newKeyQueries (newKey) or localQueries.
func (s *Store) commitLocalOnce(ctx context.Context, query string, newKey bool, args []any, inTx func()) (localOutcome, error) {
	if inTx == nil {
		outcome, err := runLocal(newKey, func() (pgconn.CommandTag, error) { return s.pool.Exec(ctx, query, args...) },
			func(dest ...any) error { return s.pool.QueryRow(ctx, query, args...).Scan(dest...) })
		if err != nil {
			return 0, fmt.Errorf("commit request: %w", err)
		}
		return outcome, nil
	}
	// BEGIN and the statement travel together, so the lock is taken one round trip
	// after the request reached the store, as without the hook.
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return 0, fmt.Errorf("begin request: %w", err)
	}
	defer conn.Release()
	open := false
	// Also on a panic of inTx (a crash hook): the rollback releases lock and rows.
	defer func() {
		if open {
			if _, err := conn.Exec(context.WithoutCancel(ctx), "ROLLBACK"); err != nil {
				conn.Conn().Close(context.WithoutCancel(ctx)) // never back to the pool mid-transaction
			}
		}
	}()
	batch := &pgx.Batch{}
	batch.Queue("BEGIN")
	batch.Queue(query, args...)
	results := conn.SendBatch(ctx, batch)
	_, err = results.Exec()
	var outcome localOutcome
	if err == nil {
		open = true
		outcome, err = runLocal(newKey, results.Exec, func(dest ...any) error { return results.QueryRow().Scan(dest...) })
	}
	if cerr := results.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, fmt.Errorf("commit request: %w", err)
	}
	if outcome != localWritten {
		return outcome, nil
	}
	inTx()
	if _, err := conn.Exec(ctx, "COMMIT"); err != nil {
		return 0, fmt.Errorf("commit request: %w", err)
	}
	open = false
	return localWritten, nil
}

// runLocal reads a statement's outcome: newKeyQueries report the rows they inserted
// (exec), localQueries whether the lock was held and the key row written (scan).
func runLocal(newKey bool, exec func() (pgconn.CommandTag, error), scan func(dest ...any) error) (localOutcome, error) {
	if newKey {
		tag, err := exec()
		switch {
		case err != nil:
			return 0, err
		case tag.RowsAffected() > 0:
			return localWritten, nil
		}
		return localNotWritten, nil
	}
	var held bool
	var n int64
	if err := scan(&held, &n); err != nil {
		return 0, err
	}
	switch {
	case !held:
		return localNotHeld, nil
	case n > 0:
		return localWritten, nil
	}
	return localNotWritten, nil
}

// Held implements idempotency.LocalStore: the scope's transaction lock in pg_locks.
func (s *Store) Held(ctx context.Context, sc idempotency.Scope) (bool, error) {
	id := uint64(lockID(sc.Hash()))
	var held bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory'
		AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
		AND classid = $1::bigint::oid AND objid = $2::bigint::oid AND objsubid = 1 AND granted)`,
		int64(id>>32), int64(id&0xffff_ffff)).Scan(&held)
	if err != nil {
		return false, fmt.Errorf("read key lock: %w", err)
	}
	return held, nil
}
