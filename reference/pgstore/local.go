package pgstore

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/idemproof/idemproof/reference/idempotency"
	"github.com/jackc/pgx/v5"
)

var _ idempotency.LocalStore = (*Store)(nil)

// lockID is the scope's transaction-lock key: the first 8 bytes of its hash. Two scopes
// sharing one would only answer each other 409 now and then, never mix records.
func lockID(h idempotency.ScopeHash) int64 { return int64(binary.BigEndian.Uint64(h[:8])) }

// localQueries are the one-transaction statements, index as completeQueries.
//
// The lock is a CTE the key's INSERT reads, so it is taken before the write. Under READ
// COMMITTED the statement's snapshot is older than its lock: a key row another
// transaction committed in between is invisible here, so the key is not looked up by a
// SELECT but written with ON CONFLICT, which checks the latest committed row (waiting for
// an uncommitted one) and overwrites it only where Decide would acquire: past the window,
// or a stale two-phase lock with the same fingerprint. When the write does not happen
// the effects are not inserted either, and CommitLocal reads what the live record says.
//
// The row's fence is 0, a token the sequence never hands out, and it is written
// completed: no two-phase holder's Complete can match it (that needs its own fence and an
// uncompleted row), so it draws no token from the sequence, which every concurrent
// request would otherwise contend for.
var localQueries [3]string

func init() {
	for n := range 3 {
		q := `WITH l AS (SELECT pg_try_advisory_xact_lock($2::bigint) AS held),
		k AS (
			INSERT INTO idempotency_keys AS o (scope_hash, principal, endpoint, idempotency_key, fingerprint,
				created_at, expires_at, locked_until, fence, completed, response_status, response_headers, response_body)
			SELECT $1::bytea, $3::text, $4::text, $5::text, $6::text, $7::timestamptz, $8::timestamptz, NULL,
				0, true, $9::integer, $10::bytea, $11::bytea FROM l WHERE l.held
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
// localQueries), the same statement after BEGIN in one round trip otherwise, inTx
// between it and the COMMIT.
func (s *Store) CommitLocal(ctx context.Context, req idempotency.AcquireRequest, resp idempotency.Response, effects []idempotency.Effect, inTx func()) (idempotency.Acquisition, error) {
	req.Now = micro(req.Now)
	headers, err := json.Marshal(resp.Header)
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
	args := append([]any{h[:], lockID(h), sc.Principal, sc.Endpoint, sc.Key, fresh.Fingerprint, fresh.Created,
		fresh.ExpiresAt, resp.Status, headers, body}, insertEffectArgs(effects)...)
	query := localQueries[shape(effects)]
	// The write can lose to a record that then vanishes (a two-phase key released), hence
	// the bounded loop; each round is a new statement with a new snapshot.
	for range 5 {
		held, written, err := s.commitLocalOnce(ctx, query, args, inTx)
		if err != nil {
			return idempotency.Acquisition{}, err
		}
		if !held {
			return idempotency.Acquisition{State: idempotency.InFlight}, nil
		}
		if written {
			return idempotency.Acquisition{State: idempotency.Acquired}, nil
		}
		existing, ok, err := s.Lookup(ctx, sc, req.Now)
		if err != nil {
			return idempotency.Acquisition{}, err
		}
		var found *idempotency.Record
		if ok {
			found = &existing
		}
		if state, retry := idempotency.DecideLocal(found, req); !retry {
			return idempotency.Acquisition{State: state, Record: existing}, nil
		}
	}
	return idempotency.Acquisition{}, errors.New("commit request: the key's record kept changing under the transaction; retry")
}

// commitLocalOnce runs the statement; held is false when another transaction holds the
// key's lock, written whether the key and the effects were committed.
func (s *Store) commitLocalOnce(ctx context.Context, query string, args []any, inTx func()) (held, written bool, err error) {
	var n int64
	if inTx == nil {
		if err := s.pool.QueryRow(ctx, query, args...).Scan(&held, &n); err != nil {
			return false, false, fmt.Errorf("commit request: %w", err)
		}
		return held, n > 0, nil
	}
	// BEGIN and the statement travel together, so the lock is taken one round trip
	// after the request reached the store, as without the hook.
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return false, false, fmt.Errorf("begin request: %w", err)
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
	if err == nil {
		open = true
		err = results.QueryRow().Scan(&held, &n)
	}
	if cerr := results.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return false, false, fmt.Errorf("commit request: %w", err)
	}
	if !held || n == 0 {
		return held, false, nil
	}
	inTx()
	if _, err := conn.Exec(ctx, "COMMIT"); err != nil {
		return false, false, fmt.Errorf("commit request: %w", err)
	}
	open = false
	return true, true, nil
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
