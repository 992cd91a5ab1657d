-- ci/bench database: the keyed refund in the one-row model (one-row.sql): the key's lock
-- and ONE row, the refund with its key's record, unless the key has a row.
\set h1 random(1, 9223372036854775807)
\set h2 random(1, 9223372036854775807)
\set h3 random(1, 9223372036854775807)
\set h4 random(1, 9223372036854775807)
\set id random(1, 9223372036854775807)
\set order random(1, 1000000000)
INSERT INTO ledger (id, kind, entity, principal, data, created_at, scope_hash, endpoint, idempotency_key,
    fingerprint, expires_at, response_status, response_headers, response_body)
SELECT 'rf_' || lpad(to_hex(:id::bigint), 24, '0'), 'refund', 'order-' || :order, 'anonymous',
  '\x7b226964223a2272665f30303030303030303030303030303030303030303030222c226f726465725f6964223a226f726465722d31222c22616d6f756e74223a343930302c2263726561746564223a313736343534343030307d'::bytea,
  now(), int8send(:h1::bigint) || int8send(:h2::bigint) || int8send(:h3::bigint) || int8send(:h4::bigint),
  'POST /v1/refunds', 'key-' || :h1, 'a3f1c2e4b5d6a7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f70',
  now() + interval '24 hours', 201,
  '\x7b22436f6e74656e742d54797065223a5b226170706c69636174696f6e2f6a736f6e225d2c224c6f636174696f6e223a5b222f76312f726566756e64732f72665f30303030303030303030303030303030303030303030225d7d'::bytea,
  '\x7b226964223a2272665f30303030303030303030303030303030303030303030222c226f726465725f6964223a226f726465722d31222c22616d6f756e74223a343930302c2263726561746564223a313736343534343030307d'::bytea
WHERE pg_try_advisory_xact_lock(:h1::bigint)
ON CONFLICT (scope_hash) WHERE scope_hash IS NOT NULL DO NOTHING;
