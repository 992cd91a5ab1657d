-- ci/bench database: one-row.sql without its indexes: the key's record
-- lives in its refund's ledger row (the columns of idempotency_keys that the ledger
-- lacks), but with no index on them: what the key's indexes cost, not a model to use.
ALTER TABLE ledger ADD COLUMN scope_hash bytea, ADD COLUMN endpoint text, ADD COLUMN idempotency_key text,
  ADD COLUMN fingerprint text, ADD COLUMN expires_at timestamptz, ADD COLUMN response_status integer,
  ADD COLUMN response_headers bytea, ADD COLUMN response_body bytea;
