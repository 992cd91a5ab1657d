-- ci/bench database: the keyed refund on pgstore's one-transaction path, a new key: the
-- statement of CommitLocal (newKeyQueries, one effect) — the key's transaction lock, the
-- completed key row with the stored response, and the refund only if the key was written.
-- Parameters in the statement's order; the scope hash is 32 random bytes.
\set h1 random(1, 9223372036854775807)
\set h2 random(1, 9223372036854775807)
\set h3 random(1, 9223372036854775807)
\set h4 random(1, 9223372036854775807)
\set id random(1, 9223372036854775807)
\set order random(1, 1000000000)
WITH k AS (INSERT INTO idempotency_keys (scope_hash, principal, endpoint, idempotency_key, fingerprint,
    created_at, expires_at, locked_until, fence, completed, response_status, response_headers, response_body)
  SELECT int8send(:h1::bigint) || int8send(:h2::bigint) || int8send(:h3::bigint) || int8send(:h4::bigint),
    'anonymous', 'POST /v1/refunds', 'key-' || :h1, 'a3f1c2e4b5d6a7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f70',
    now(), now() + interval '24 hours', NULL, 0, true, 201,
    '\x7b22436f6e74656e742d54797065223a5b226170706c69636174696f6e2f6a736f6e225d2c224c6f636174696f6e223a5b222f76312f726566756e64732f72665f30303030303030303030303030303030303030303030225d7d'::bytea,
    '\x7b226964223a2272665f30303030303030303030303030303030303030303030222c226f726465725f6964223a226f726465722d31222c22616d6f756e74223a343930302c2263726561746564223a313736343534343030307d'::bytea
  WHERE pg_try_advisory_xact_lock(:h1::bigint)
  ON CONFLICT (scope_hash) DO NOTHING RETURNING 1)
INSERT INTO ledger (id, kind, entity, principal, data, created_at)
SELECT 'rf_' || lpad(to_hex(:id::bigint), 24, '0'), 'refund', 'order-' || :order, 'anonymous',
  '\x7b226964223a2272665f30303030303030303030303030303030303030303030222c226f726465725f6964223a226f726465722d31222c22616d6f756e74223a343930302c2263726561746564223a313736343534343030307d'::bytea,
  now()
WHERE EXISTS (SELECT 1 FROM k);
