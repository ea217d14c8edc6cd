-- Grows a bank of the scale bench (bench:scale) inside the database to about :target memories, in minutes where the
-- fill through the engine takes hours: for a measurement at a size, never for a bank anyone uses.
--
--   psql postgres://.../DB -v bank=scale-0 -v target=1000000 -f packages/engine/bench/grow-bank.sql
--
-- Run it on a copy (CREATE DATABASE copy TEMPLATE filled, with no one connected to `filled`) of a database that
-- bench:scale filled and that the current engine has opened once (so its migrations are applied). Each new memory is
-- a stored one followed by the first sentence of another, a different one each round, as the bench's own derived
-- memories are; its vector is the normalised sum of twice the first one's and the other's (the bench's turn plus half
-- the other turn), its own retain call (batch) for each round. Rows go in through the table, so the triggers keep what
-- the engine's writes keep: the keyword statistics' deltas, the bank's change numbers, the history. A text that is
-- already stored is skipped (the dedup index), so the bank ends a little under :target. Entities are not extracted.
-- The bank's vector index is dropped first and built again at the end (an insert into it costs more than the build).
\set ON_ERROR_STOP on
\timing on
SELECT indexname AS vector_index, indexdef AS vector_index_sql FROM pg_indexes
WHERE tablename = 'memories' AND indexname LIKE 'memories_hnsw_%'
  AND indexdef LIKE '%bank_id = ''' || :'bank' || '''::text%' \gset
DROP INDEX IF EXISTS :"vector_index";
CREATE TEMP TABLE grow_source AS
  SELECT row_number() OVER (ORDER BY id) AS n, text, token_count, occurred_at, embedding, batch_id, seq
  FROM memories WHERE tenant = 'default' AND bank_id = :'bank' AND embedding IS NOT NULL AND source_id IS NULL;
CREATE INDEX ON grow_source (n);
ANALYZE grow_source;
SELECT count(*) AS source_rows FROM grow_source \gset
-- One statement (one transaction) a round: round r pairs row n with row n + r * 9973, wrapping.
SELECT format($sql$
INSERT INTO memories (id, tenant, bank_id, space, type, text, metadata, tags, entities, batch_id, seq, content_hash,
  token_count, occurred_at, embedding, fts)
SELECT gen_random_uuid(), 'default', %1$L, 'default', 'raw', t.text, '{}', '{}', '{}',
  md5(a.batch_id::text || ':grow:%2$s')::uuid, a.seq, encode(sha256(convert_to(t.text, 'UTF8')), 'hex'),
  a.token_count + (length(t.tail) / 4)::int, a.occurred_at,
  l2_normalize(a.embedding + a.embedding + b.embedding), to_tsvector('english', t.text)
FROM grow_source a JOIN grow_source b ON b.n = ((a.n - 1 + %2$s * 9973) %% %3$s) + 1
CROSS JOIN LATERAL (SELECT coalesce(substring(b.text from '^[^.!?]*[.!?]'), b.text) AS tail) s
CROSS JOIN LATERAL (SELECT a.text || ' ' || s.tail AS text, s.tail) t
WHERE a.n <= %4$s
ON CONFLICT (tenant, bank_id, space, content_hash) WHERE source_id IS NULL DO NOTHING$sql$,
  :'bank', r, :source_rows, least(:source_rows, :target - :source_rows * r))
FROM generate_series(1, ceil((:target - :source_rows)::numeric / :source_rows)::int) r \gexec
SET maintenance_work_mem = '2GB';
:vector_index_sql;
VACUUM ANALYZE memories;
SELECT count(*) AS memories FROM memories WHERE tenant = 'default' AND bank_id = :'bank';
