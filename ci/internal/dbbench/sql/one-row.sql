-- ci/bench database: the other data model, one row per keyed request: the key's record
-- lives in its refund's ledger row (the columns of idempotency_keys that the ledger
-- lacks), unique where a key is set, with the same index for expiry as the key table.
ALTER TABLE ledger ADD COLUMN scope_hash bytea, ADD COLUMN endpoint text, ADD COLUMN idempotency_key text,
  ADD COLUMN fingerprint text, ADD COLUMN expires_at timestamptz, ADD COLUMN response_status integer,
  ADD COLUMN response_headers bytea, ADD COLUMN response_body bytea;
CREATE UNIQUE INDEX ledger_scope_hash_idx ON ledger (scope_hash) WHERE scope_hash IS NOT NULL;
CREATE INDEX ledger_expires_at_idx ON ledger (expires_at) WHERE scope_hash IS NOT NULL;
