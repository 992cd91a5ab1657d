-- ci/bench database: the keyed refund on pgstore's two-phase path (work with effects
-- outside the database, the memory store's design), a new key: Acquire's insert of the
-- locked key row with a fencing token, committed, then Complete's one statement, the
-- fenced completion with the stored response and the refund. Two round trips, two commits.
\set h1 random(1, 9223372036854775807)
\set h2 random(1, 9223372036854775807)
\set h3 random(1, 9223372036854775807)
\set h4 random(1, 9223372036854775807)
\set id random(1, 9223372036854775807)
\set order random(1, 1000000000)
\set checkfence true
INSERT INTO idempotency_keys
  (scope_hash, principal, endpoint, idempotency_key, fingerprint, created_at, expires_at, locked_until, fence)
  VALUES (int8send(:h1::bigint) || int8send(:h2::bigint) || int8send(:h3::bigint) || int8send(:h4::bigint), 'anonymous', 'POST /v1/refunds', 'key-' || :h1,
    'a3f1c2e4b5d6a7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f70', now(), now() + interval '24 hours',
    now() + interval '30 seconds', nextval('idempotency_fence_seq')) ON CONFLICT DO NOTHING RETURNING fence
\gset
WITH k AS (
  UPDATE idempotency_keys SET completed = true, locked_until = NULL,
    response_status = 201, response_headers = '\x7b22436f6e74656e742d54797065223a5b226170706c69636174696f6e2f6a736f6e225d2c224c6f636174696f6e223a5b222f76312f726566756e64732f72665f30303030303030303030303030303030303030303030225d7d'::bytea,
    response_body = '\x7b226964223a2272665f30303030303030303030303030303030303030303030222c226f726465725f6964223a226f726465722d31222c22616d6f756e74223a343930302c2263726561746564223a313736343534343030307d'::bytea
  WHERE scope_hash = int8send(:h1::bigint) || int8send(:h2::bigint) || int8send(:h3::bigint) || int8send(:h4::bigint) AND (NOT :checkfence::boolean OR (fence = :fence AND NOT completed))
  RETURNING 1
), ins AS (INSERT INTO ledger (id, kind, entity, principal, data, created_at)
  SELECT 'rf_' || lpad(to_hex(:id::bigint), 24, '0'), 'refund', 'order-' || :order, 'anonymous',
    '\x7b226964223a2272665f30303030303030303030303030303030303030303030222c226f726465725f6964223a226f726465722d31222c22616d6f756e74223a343930302c2263726561746564223a313736343534343030307d'::bytea,
    now()
  WHERE NOT :checkfence::boolean OR EXISTS (SELECT 1 FROM k)) SELECT count(*) FROM k;
