// Package pgstore is the PostgreSQL idempotency.Store (pgx/v5). Its schema (schema.sql,
// embedded) is created on Open.
//
// Atomicity: Acquire inserts the key in one statement, or locks the existing row (SELECT
// ... FOR UPDATE) and applies idempotency.Decide in one transaction. Complete is ONE
// statement: the fenced UPDATE of the key row and the INSERT of the effects are
// data-modifying CTEs of the same statement, and the effects are inserted only when
// the UPDATE matched the caller's fencing token — so a refund row never exists without
// its stored response, and a stale original can never commit.
//
// The one-transaction path (CommitLocal, local.go) is ONE statement for a new key: it
// takes pg_try_advisory_xact_lock on the scope's hash (the lock lives as long as the
// transaction, on any replica), INSERTs the completed key row with ON CONFLICT DO
// NOTHING, and inserts the effects only when the key row was written. ON CONFLICT and
// not a SELECT looks the key up because under READ COMMITTED the statement's snapshot is
// older than its lock: a key row committed in between is invisible to a SELECT but not to
// the conflict check, which then leaves the effects out. When nothing was written the
// live row is read in a second statement and answered (replay, 422, 409); where there is
// none, or one Decide would take over (expired, a stale two-phase lock with the same
// fingerprint), a fuller statement retries the write, overwriting only such a row, and
// says whether another transaction holds the lock (InFlight). A crash rolls the
// statement back and releases the lock. With an inTx hook the same statements run in an
// explicit transaction, the hook between the write and the commit.
//
// Times come from the caller's clock (never the database's NOW()), truncated to
// microseconds, PostgreSQL's precision.
package pgstore

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/idemproof/idemproof/reference/idempotency"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed schema.sql
var schema string

// schemaLockID serialises concurrent schema creation by several processes.
const schemaLockID = 0x1de3_9700f

// Store is a PostgreSQL-backed idempotency.Store.
type Store struct {
	pool *pgxpool.Pool
}

var _ idempotency.Store = (*Store)(nil)

// Open connects to dsn (postgres://...), checks the connection and creates the schema.
// An error that trying again cannot mend (a malformed DSN, an earlier schema) is
// Permanent; any other (PostgreSQL not up yet, a connection cut) may pass.
func Open(ctx context.Context, dsn string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, permanent{fmt.Errorf("parse postgres dsn: %w", err)}
	}
	if !strings.Contains(dsn, "pool_max_conns") && cfg.MaxConns < 16 {
		cfg.MaxConns = 16 // many requests wait on the database at once; the DSN may say otherwise
	}
	cfg.ConnConfig.DialFunc = dialer(cfg.ConnConfig.ConnectTimeout).DialContext
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect postgres: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect postgres: %w (is PostgreSQL running and the DSN right?)", err)
	}
	s := &Store{pool: pool}
	if err := s.migrate(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return s, nil
}

// permanent marks an Open error that trying again cannot mend.
type permanent struct{ error }

func (p permanent) Unwrap() error { return p.error }

// Permanent reports whether an error of Open would come again however often Open is
// tried: a malformed DSN or a database that holds an earlier schema.
func Permanent(err error) bool {
	var p permanent
	return errors.As(err, &p) || errors.Is(err, errOldSchema)
}

var errOldSchema = errors.New("the database holds an earlier idemproof schema (idempotency_keys has no scope_hash column); " +
	"point the store at a new database, or drop the tables idempotency_keys and ledger if what they hold may be lost")

func (s *Store) migrate(ctx context.Context) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(schemaLockID)); err != nil {
			return err
		}
		// CREATE TABLE IF NOT EXISTS would leave a table of an earlier layout as it is.
		var earlier bool
		err := tx.QueryRow(ctx, `SELECT to_regclass('idempotency_keys') IS NOT NULL AND NOT EXISTS (
			SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema()
			AND table_name = 'idempotency_keys' AND column_name = 'scope_hash')`).Scan(&earlier)
		if err != nil {
			return err
		}
		if earlier {
			return errOldSchema
		}
		_, err = tx.Exec(ctx, schema)
		return err
	})
	if err != nil {
		return fmt.Errorf("create schema: %w", err)
	}
	return nil
}

// Pool exposes the connection pool (for tests that inspect tables).
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Close closes the pool.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

func micro(t time.Time) time.Time { return t.Truncate(time.Microsecond) }

const recordColumns = `fingerprint, created_at, expires_at, locked_until, fence, completed,
	response_status, response_headers, response_body`

// whereScope selects a scope's row by its hash, always the statement's $1.
const whereScope = `scope_hash = $1`

// Acquire implements idempotency.Store.
func (s *Store) Acquire(ctx context.Context, req idempotency.AcquireRequest) (idempotency.Acquisition, error) {
	req.Now = micro(req.Now)
	// The common case, a new key, is one statement. The row may also vanish between
	// the insert and the row lock (released by its owner), hence the bounded loop.
	for range 5 {
		acq, inserted, err := s.insertKey(ctx, req)
		if err != nil || inserted {
			return acq, err
		}
		acq, found, err := s.acquireExisting(ctx, req)
		if err != nil || found {
			return acq, err
		}
	}
	return idempotency.Acquisition{}, errors.New("acquire key: the row kept appearing and vanishing; retry")
}

// insertKeyQuery records a new key, locked, with a new fencing token.
const insertKeyQuery = `INSERT INTO idempotency_keys
	(scope_hash, principal, endpoint, idempotency_key, fingerprint, created_at, expires_at, locked_until, fence)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, nextval('idempotency_fence_seq')) ON CONFLICT DO NOTHING RETURNING fence`

// insertKey records a new key; inserted is false when the key already exists.
func (s *Store) insertKey(ctx context.Context, req idempotency.AcquireRequest) (idempotency.Acquisition, bool, error) {
	sc := req.Scope
	h := sc.Hash()
	_, fresh := idempotency.Decide(nil, req, 0)
	err := s.pool.QueryRow(ctx, insertKeyQuery, h[:], sc.Principal, sc.Endpoint, sc.Key, fresh.Fingerprint, fresh.Created, fresh.ExpiresAt, fresh.LockedUntil).Scan(&fresh.Fence)
	if errors.Is(err, pgx.ErrNoRows) {
		return idempotency.Acquisition{}, false, nil
	}
	if err != nil {
		return idempotency.Acquisition{}, false, fmt.Errorf("insert key: %w", err)
	}
	return idempotency.Acquisition{State: idempotency.Acquired, Record: fresh}, true, nil
}

// acquireExisting applies Decide under the row lock; found is false when the row is gone.
func (s *Store) acquireExisting(ctx context.Context, req idempotency.AcquireRequest) (idempotency.Acquisition, bool, error) {
	var acq idempotency.Acquisition
	found := false
	sc := req.Scope
	h := sc.Hash()
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		existing, err := scanRecord(tx.QueryRow(ctx, `SELECT `+recordColumns+` FROM idempotency_keys WHERE `+whereScope+` FOR UPDATE`,
			h[:]), sc)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("lock key: %w", err)
		}
		found = true
		state, next := idempotency.Decide(&existing, req, 0)
		acq = idempotency.Acquisition{State: state, Record: existing}
		if state != idempotency.Acquired {
			return nil
		}
		err = tx.QueryRow(ctx, `UPDATE idempotency_keys SET fingerprint = $2, created_at = $3, expires_at = $4,
			locked_until = $5, fence = nextval('idempotency_fence_seq'), completed = false, response_status = NULL,
			response_headers = NULL, response_body = NULL WHERE `+whereScope+` RETURNING fence`,
			h[:], next.Fingerprint, next.Created, next.ExpiresAt, next.LockedUntil).Scan(&next.Fence)
		if err != nil {
			return fmt.Errorf("take key over: %w", err)
		}
		acq.Record = next
		return nil
	})
	return acq, found, err
}

func scanRecord(row pgx.Row, sc idempotency.Scope) (idempotency.Record, error) {
	var (
		r       = idempotency.Record{Scope: sc}
		locked  *time.Time
		status  *int32
		headers []byte
		body    []byte
	)
	if err := row.Scan(&r.Fingerprint, &r.Created, &r.ExpiresAt, &locked, &r.Fence, &r.Completed, &status, &headers, &body); err != nil {
		return r, err
	}
	if locked != nil {
		r.LockedUntil = *locked
	}
	if r.Completed && status != nil {
		resp := idempotency.Response{Status: int(*status), Header: map[string]string{}, Body: body}
		if resp.Body == nil {
			resp.Body = []byte{}
		}
		if len(headers) > 0 {
			if err := json.Unmarshal(headers, &resp.Header); err != nil {
				return r, fmt.Errorf("decode stored headers: %w", err)
			}
		}
		r.Response = &resp
	}
	return r, nil
}

// effectColumns turns effects into the column arrays the unnest() inserts read.
func effectColumns(effects []idempotency.Effect) (ids, kinds, entities, principals []string, data [][]byte, created []time.Time) {
	for _, e := range effects {
		ids = append(ids, e.ID)
		kinds = append(kinds, e.Kind)
		entities = append(entities, e.Entity)
		principals = append(principals, e.Principal)
		data = append(data, e.Data)
		created = append(created, micro(e.Created))
	}
	return
}

// insertEffects is the INSERT of n effects into the ledger, parameters from $first
// (appendEffectArgs), rows kept only where cond holds. One effect, the common case, is a
// plain row of parameters: PostgreSQL runs it faster than the unnest() of six
// one-element arrays.
func insertEffects(n, first int, cond string) string {
	p := func(i int, typ string) string { return fmt.Sprintf("$%d::%s", first+i, typ) }
	rows := "SELECT " + p(0, "text") + ", " + p(1, "text") + ", " + p(2, "text") + ", " + p(3, "text") + ", " +
		p(4, "bytea") + ", " + p(5, "timestamptz")
	if n != 1 {
		rows = "SELECT * FROM unnest(" + p(0, "text[]") + ", " + p(1, "text[]") + ", " + p(2, "text[]") + ", " +
			p(3, "text[]") + ", " + p(4, "bytea[]") + ", " + p(5, "timestamptz[]") + ")"
	}
	return "INSERT INTO ledger (id, kind, entity, principal, data, created_at) " + rows + " " + cond
}

// The statements, built once: index 0 for no effects, 1 for one, 2 for several.
var (
	completeQueries [3]string
	effectQueries   [3]string
)

func init() {
	for n := range 3 {
		// The effects are inserted only when the fenced UPDATE matched (unless the
		// no-fencing flaw turned the check off): a stale original commits neither.
		q := `WITH k AS (
			UPDATE idempotency_keys SET completed = true, locked_until = NULL,
				response_status = $3, response_headers = $4, response_body = $5
			WHERE ` + whereScope + ` AND (NOT $6::boolean OR (fence = $2 AND NOT completed))
			RETURNING 1
		)`
		if n > 0 {
			q += `, ins AS (` + insertEffects(n, 7, `WHERE NOT $6::boolean OR EXISTS (SELECT 1 FROM k)`) + `)`
		}
		completeQueries[n] = q + ` SELECT count(*) FROM k`
		effectQueries[n] = insertEffects(n, 1, "")
	}
}

func shape(effects []idempotency.Effect) int { return min(len(effects), 2) }

// effectArgs is the number of insertEffects' parameters.
const effectArgs = 6

// appendEffectArgs appends insertEffects' parameters for effects to args: none for no
// effects. Callers size args for them, so a request's parameters take one allocation.
func appendEffectArgs(args []any, effects []idempotency.Effect) []any {
	switch len(effects) {
	case 0:
		return args
	case 1:
		e := effects[0]
		return append(args, e.ID, e.Kind, e.Entity, e.Principal, e.Data, micro(e.Created))
	}
	ids, kinds, entities, principals, data, created := effectColumns(effects)
	return append(args, ids, kinds, entities, principals, data, created)
}

// Complete implements idempotency.Store in one statement (see the package doc).
func (s *Store) Complete(ctx context.Context, sc idempotency.Scope, fence int64, resp idempotency.Response, effects []idempotency.Effect, checkFence bool) error {
	headers, err := encodeHeaders(resp.Header)
	if err != nil {
		return fmt.Errorf("encode headers: %w", err)
	}
	body := resp.Body
	if body == nil {
		body = []byte{}
	}
	h := sc.Hash()
	args := appendEffectArgs(append(make([]any, 0, 6+effectArgs), h[:], fence, resp.Status, headers, body, checkFence), effects)
	var updated int64
	if err := s.pool.QueryRow(ctx, completeQueries[shape(effects)], args...).Scan(&updated); err != nil {
		return fmt.Errorf("commit response: %w", err)
	}
	if checkFence && updated == 0 {
		return idempotency.ErrFenced
	}
	return nil
}

// Release implements idempotency.Store.
func (s *Store) Release(ctx context.Context, sc idempotency.Scope, fence int64) error {
	h := sc.Hash()
	_, err := s.pool.Exec(ctx, `DELETE FROM idempotency_keys WHERE `+whereScope+` AND fence = $2 AND NOT completed`,
		h[:], fence)
	if err != nil {
		return fmt.Errorf("release key: %w", err)
	}
	return nil
}

// Lookup implements idempotency.Store.
func (s *Store) Lookup(ctx context.Context, sc idempotency.Scope, now time.Time) (idempotency.Record, bool, error) {
	h := sc.Hash()
	r, err := scanRecord(s.pool.QueryRow(ctx, `SELECT `+recordColumns+` FROM idempotency_keys WHERE `+whereScope+` AND expires_at > $2`,
		h[:], micro(now)), sc)
	if errors.Is(err, pgx.ErrNoRows) {
		return idempotency.Record{}, false, nil
	}
	if err != nil {
		return idempotency.Record{}, false, fmt.Errorf("look up key: %w", err)
	}
	return r, true, nil
}

// SetFingerprint implements idempotency.Store.
func (s *Store) SetFingerprint(ctx context.Context, sc idempotency.Scope, fingerprint string) error {
	h := sc.Hash()
	_, err := s.pool.Exec(ctx, `UPDATE idempotency_keys SET fingerprint = $2 WHERE `+whereScope, h[:], fingerprint)
	if err != nil {
		return fmt.Errorf("set fingerprint: %w", err)
	}
	return nil
}

// CommitEffects implements idempotency.Store.
func (s *Store) CommitEffects(ctx context.Context, effects []idempotency.Effect) error {
	if len(effects) == 0 {
		return nil
	}
	_, err := s.pool.Exec(ctx, effectQueries[shape(effects)], appendEffectArgs(make([]any, 0, effectArgs), effects)...)
	if err != nil {
		return fmt.Errorf("insert effects: %w", err)
	}
	return nil
}

// Effects implements idempotency.Store.
func (s *Store) Effects(ctx context.Context, kind, entity string) ([]idempotency.Effect, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, kind, entity, principal, data, created_at FROM ledger
		WHERE kind = $1 AND entity = $2 ORDER BY seq`, kind, entity)
	if err != nil {
		return nil, fmt.Errorf("read ledger: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (idempotency.Effect, error) {
		var e idempotency.Effect
		err := row.Scan(&e.ID, &e.Kind, &e.Entity, &e.Principal, &e.Data, &e.Created)
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("read ledger: %w", err)
	}
	return out, nil
}

// Effect implements idempotency.Store.
func (s *Store) Effect(ctx context.Context, kind, id string) (idempotency.Effect, bool, error) {
	var e idempotency.Effect
	err := s.pool.QueryRow(ctx, `SELECT id, kind, entity, principal, data, created_at FROM ledger WHERE id = $1 AND kind = $2`,
		id, kind).Scan(&e.ID, &e.Kind, &e.Entity, &e.Principal, &e.Data, &e.Created)
	if errors.Is(err, pgx.ErrNoRows) {
		return idempotency.Effect{}, false, nil
	}
	if err != nil {
		return idempotency.Effect{}, false, fmt.Errorf("read ledger: %w", err)
	}
	return e, true, nil
}

// DeleteExpired implements idempotency.Store.
func (s *Store) DeleteExpired(ctx context.Context, now time.Time) (int, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM idempotency_keys WHERE expires_at <= $1`, micro(now))
	if err != nil {
		return 0, fmt.Errorf("delete expired keys: %w", err)
	}
	return int(tag.RowsAffected()), nil
}
