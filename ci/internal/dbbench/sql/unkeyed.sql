-- ci/bench database: the unkeyed refund, as pgstore's CommitEffects inserts it (one
-- plain-row INSERT into the ledger). Random ids and orders, like the reference's.
\set id random(1, 9223372036854775807)
\set order random(1, 1000000000)
INSERT INTO ledger (id, kind, entity, principal, data, created_at)
SELECT 'rf_' || lpad(to_hex(:id::bigint), 24, '0'), 'refund', 'order-' || :order, 'anonymous',
  '\x7b226964223a2272665f30303030303030303030303030303030303030303030222c226f726465725f6964223a226f726465722d31222c22616d6f756e74223a343930302c2263726561746564223a313736343534343030307d'::bytea,
  now();
