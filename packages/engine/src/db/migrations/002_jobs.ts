/**
 * 002: the durable job queue (async retain, LLM fact extraction). An operation is what a client tracks
 * (GET /v1/{tenant}/operations/{id}); it owns one or more jobs. A job is claimed by one worker at a time under a lease
 * (`locked_until`), and completed in the same transaction that writes its results, guarded by its lease token, so a
 * job never completes twice even when a worker dies mid-job and another takes it over.
 */
export default `
CREATE TABLE operations (
  id uuid PRIMARY KEY,
  tenant text NOT NULL,
  bank_id text NOT NULL,
  space text NOT NULL,
  kind text NOT NULL,
  items_count integer NOT NULL DEFAULT 0,
  memory_ids uuid[] NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX operations_bank ON operations (tenant, bank_id, created_at DESC);

CREATE TABLE jobs (
  id uuid PRIMARY KEY,
  operation_id uuid NOT NULL REFERENCES operations(id) ON DELETE CASCADE,
  tenant text NOT NULL,
  bank_id text NOT NULL,
  space text NOT NULL,
  kind text NOT NULL,
  memory_id uuid,
  payload jsonb NOT NULL DEFAULT '{}',
  status text NOT NULL DEFAULT 'queued',
  attempts integer NOT NULL DEFAULT 0,
  max_attempts integer NOT NULL DEFAULT 3,
  run_after timestamptz NOT NULL DEFAULT now(),
  lease uuid,
  locked_until timestamptz,
  last_error text,
  result jsonb,
  tokens_input bigint NOT NULL DEFAULT 0,
  tokens_output bigint NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz
);
CREATE INDEX jobs_ready ON jobs (run_after, created_at) WHERE status IN ('queued', 'running');
CREATE INDEX jobs_operation ON jobs (operation_id);
CREATE INDEX jobs_memory ON jobs (memory_id);
`;
