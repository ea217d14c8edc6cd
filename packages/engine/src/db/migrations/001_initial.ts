/**
 * 001: banks and memories. Every row is keyed by (tenant, bank_id, space): the hard partition every query filters
 * on. Memory bodies live either in plaintext columns (text, context, metadata) or, with encryption at rest, only in
 * body_enc (ciphertext) with a keyed blind index in fts; the embedding column is added once the model's dimension
 * is known (see schema.ts).
 */
export default `
CREATE TABLE IF NOT EXISTS mnemos_meta (
  key text PRIMARY KEY,
  value jsonb NOT NULL
);

CREATE TABLE banks (
  tenant text NOT NULL,
  bank_id text NOT NULL,
  name text NOT NULL,
  mission text NOT NULL DEFAULT '',
  disposition jsonb NOT NULL DEFAULT '{"skepticism":3,"literalism":3,"empathy":3}',
  space text NOT NULL DEFAULT 'default',
  profile jsonb NOT NULL DEFAULT '{}',
  wrapped_key bytea,
  tokens_input bigint NOT NULL DEFAULT 0,
  tokens_output bigint NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  last_write_at timestamptz,
  PRIMARY KEY (tenant, bank_id)
);

CREATE TABLE memories (
  id uuid PRIMARY KEY,
  tenant text NOT NULL,
  bank_id text NOT NULL,
  space text NOT NULL,
  type text NOT NULL,
  text text,
  context text,
  metadata jsonb NOT NULL DEFAULT '{}',
  body_enc bytea,
  tags text[] NOT NULL DEFAULT '{}',
  entities text[] NOT NULL DEFAULT '{}',
  document_id text,
  source_id uuid REFERENCES memories(id) ON DELETE CASCADE,
  batch_id uuid,
  seq integer NOT NULL DEFAULT 0,
  content_hash text NOT NULL,
  token_count integer NOT NULL DEFAULT 0,
  occurred_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  state text NOT NULL DEFAULT 'valid',
  superseded_by uuid,
  valid_to timestamptz,
  fts tsvector NOT NULL
);

CREATE INDEX memories_partition_created ON memories (tenant, bank_id, space, created_at DESC);
CREATE INDEX memories_document_seq ON memories (tenant, bank_id, space, document_id, seq);
CREATE INDEX memories_batch_seq ON memories (batch_id, seq);
CREATE INDEX memories_source ON memories (source_id);
CREATE INDEX memories_fts ON memories USING gin (fts);
CREATE UNIQUE INDEX memories_dedupe ON memories (tenant, bank_id, space, content_hash) WHERE source_id IS NULL;
`;
