-- idemproof reference server schema; created on start, idempotent.
-- One row per (principal, endpoint, key): the seed's idempotency_keys table extended
-- with the scope, the lock and the fencing token.
CREATE TABLE IF NOT EXISTS idempotency_keys (
    -- SHA-256 of the length-prefixed principal, endpoint and key (idempotency.ScopeHash):
    -- one fixed-size key indexes and compares faster than the three texts it stands for.
    scope_hash       bytea       PRIMARY KEY,
    principal        text        NOT NULL,
    endpoint         text        NOT NULL,
    idempotency_key  text        NOT NULL,
    fingerprint      text        NOT NULL,
    created_at       timestamptz NOT NULL,  -- first record: the retention window starts here
    expires_at       timestamptz NOT NULL,
    locked_until     timestamptz,           -- NULL once completed
    fence            bigint      NOT NULL,  -- from idempotency_fence_seq, new on every acquisition;
                                            -- 0 when the one-transaction path wrote it completed
    completed        boolean     NOT NULL DEFAULT false,
    response_status  integer,
    response_headers bytea,                 -- a JSON object; stored as bytes, never queried
    response_body    bytea                  -- exact bytes: a replay is byte for byte
-- Room on every page for the completion's new row version: it changes no indexed column,
-- so PostgreSQL can keep it on the same page without touching the indexes (a HOT update).
) WITH (fillfactor = 70);
CREATE INDEX IF NOT EXISTS idempotency_keys_expires_at_idx ON idempotency_keys (expires_at);

-- Fencing tokens come from one sequence: a token is never handed out twice, even after
-- a key was released and recorded again.
CREATE SEQUENCE IF NOT EXISTS idempotency_fence_seq;

-- The side effects (refunds, invoices), committed with the stored response.
CREATE TABLE IF NOT EXISTS ledger (
    seq        bigserial   PRIMARY KEY,
    id         text        NOT NULL UNIQUE,
    kind       text        NOT NULL,        -- refund | invoice
    entity     text        NOT NULL,        -- order id
    principal  text        NOT NULL,
    data       bytea       NOT NULL,        -- the JSON object the ledger returns, exact bytes
    created_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS ledger_kind_entity_idx ON ledger (kind, entity, seq);
