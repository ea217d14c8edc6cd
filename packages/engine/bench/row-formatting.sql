-- What recall's pooled reads cost the server to format, apart from reading the rows: 150 rows of one bank chosen at
-- random, each statement run five times (\timing prints each; take the later ones, the rows then in the cache).
--
--   psql postgres://.../DB -v bank=scale-0 -f packages/engine/bench/row-formatting.sql
--
-- 1. the rows read, nothing formatted; 2. the pooled columns as JSON, as the embedded database's pooled reads send
-- them (without the keyword vector: 3); 4. with the vectors inside the JSON, as base64; 5. the same vectors as one
-- text beside it, read by each row's address; 6. the pooled columns as plain fields, as a server's pooled reads send
-- them (through COPY to stdout, so psql adds no table layout of its own).
\set QUIET on
CREATE TEMP TABLE picked AS
  SELECT id FROM memories WHERE tenant = 'default' AND bank_id = :'bank' ORDER BY random() LIMIT 150;
\o /dev/null
\timing on
\echo 1. read only
SELECT count(*) FROM memories m WHERE m.tenant = 'default' AND m.id IN (SELECT id FROM picked) \g
\g
\g
\g
\g
\echo 2. pooled columns as JSON
SELECT length(json_agg(r)::text) FROM (SELECT id, bank_id, space, type, text, context, metadata, body_enc, tags,
  entities, document_id, source_id, occurred_at, created_at, updated_at, state, superseded_by, valid_to, expires_at,
  COALESCE(valid_from, occurred_at, created_at) AS valid_from, batch_id::text AS batch_id, seq,
  (extract(epoch FROM occurred_at) * 1000)::float8 AS occurred_ms, fts::text AS fts, token_count
  FROM memories m WHERE m.tenant = 'default' AND m.id IN (SELECT id FROM picked)) r \g
\g
\g
\g
\g
\echo 3. the same without the keyword vector
SELECT length(json_agg(r)::text) FROM (SELECT id, bank_id, space, type, text, context, metadata, body_enc, tags,
  entities, document_id, source_id, occurred_at, created_at, updated_at, state, superseded_by, valid_to, expires_at,
  COALESCE(valid_from, occurred_at, created_at) AS valid_from, batch_id::text AS batch_id, seq,
  (extract(epoch FROM occurred_at) * 1000)::float8 AS occurred_ms, token_count
  FROM memories m WHERE m.tenant = 'default' AND m.id IN (SELECT id FROM picked)) r \g
\g
\g
\g
\g
\echo 4. id, text and keyword vector as JSON, with the vectors inside it
SELECT length(json_agg(r)::text) FROM (SELECT m.id, m.text, m.fts::text AS fts,
  encode(substring(vector_send(m.embedding) FROM 5), 'base64') AS embedding
  FROM memories m WHERE m.tenant = 'default' AND m.id IN (SELECT id FROM picked)) r \g
\g
\g
\g
\g
\echo 5. id, text and keyword vector as JSON, the vectors as one text beside it
SELECT length(json_agg(r)::text), length(string_agg(encode(substring(vector_send(v.embedding) FROM 5), 'base64'), ','))
FROM (SELECT m.id, m.text, m.fts::text AS fts, m.ctid AS row_tid
      FROM memories m WHERE m.tenant = 'default' AND m.id IN (SELECT id FROM picked)) r
JOIN memories v ON v.ctid = r.row_tid \g
\g
\g
\g
\g
\echo 6. pooled columns as plain fields
COPY (SELECT id, bank_id, space, type, text, context, metadata, body_enc, tags,
  entities, document_id, source_id, occurred_at, created_at, updated_at, state, superseded_by, valid_to, expires_at,
  COALESCE(valid_from, occurred_at, created_at) AS valid_from, batch_id::text AS batch_id, seq,
  (extract(epoch FROM occurred_at) * 1000)::float8 AS occurred_ms, fts::text AS fts, token_count
  FROM memories m WHERE m.tenant = 'default' AND m.id IN (SELECT id FROM picked)) TO STDOUT \g
\g
\g
\g
\g
