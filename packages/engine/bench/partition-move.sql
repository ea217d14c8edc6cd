-- What moving one bank out of a shared partition into its own costs and keeps, on a model of the memories table
-- partitioned by a per-bank number (0: the shared, default partition), before the engine is changed to it. It makes
-- and drops a database of its own:
--
--   psql postgres://.../postgres -v rows=100000 -f packages/engine/bench/partition-move.sql
--
-- It answers: 1. whether creating a bank's partition scans the shared one (it must not: that scan would read every
-- other bank's rows under a lock that stops their writes); 2. what the move (an UPDATE of the partition number) costs
-- for `rows` memories of ~1.6 KB, with the other bank's `rows` left in place; 3. whether rows that refer to a moved
-- memory (derived facts, entities) follow it or are deleted by ON DELETE CASCADE; 4. whether the row triggers can tell
-- a move from a change (a transaction-local setting they check); 5. whether a row address (ctid) names one row of the
-- table (each partition has its own addresses).
\set QUIET on
\set ON_ERROR_STOP on
DROP DATABASE IF EXISTS mnemos_partition_probe;
CREATE DATABASE mnemos_partition_probe;
\c mnemos_partition_probe
CREATE TABLE memories (
  tenant text NOT NULL, bank_id text NOT NULL, id bigint NOT NULL, part int NOT NULL DEFAULT 0,
  source_id bigint, body text, change_seq bigint,
  PRIMARY KEY (tenant, id, part)
) PARTITION BY LIST (part);
CREATE TABLE memories_shared PARTITION OF memories DEFAULT;
-- What lets a new bank's partition be created without scanning this one.
ALTER TABLE memories_shared ADD CONSTRAINT memories_shared_part CHECK (part = 0);
CREATE INDEX ON memories (tenant, bank_id);
CREATE INDEX ON memories (tenant, source_id, part);
ALTER TABLE memories ADD FOREIGN KEY (tenant, source_id, part) REFERENCES memories (tenant, id, part)
  ON DELETE CASCADE ON UPDATE CASCADE;
CREATE TABLE memory_entities (tenant text, memory_id bigint, part int, key text,
  FOREIGN KEY (tenant, memory_id, part) REFERENCES memories (tenant, id, part) ON DELETE CASCADE ON UPDATE CASCADE);
CREATE INDEX ON memory_entities (tenant, memory_id, part);
CREATE TABLE changes (op text, id bigint);
CREATE FUNCTION changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('mnemos.moving', true) = 'on' THEN RETURN NULL; END IF;
  INSERT INTO changes VALUES (TG_OP, COALESCE(NEW.id, OLD.id));
  RETURN NULL;
END $$;
CREATE TRIGGER memories_changed AFTER INSERT OR UPDATE OR DELETE ON memories FOR EACH ROW EXECUTE FUNCTION changed();

\echo filling: two banks of :rows memories, a derived fact and entities in each
INSERT INTO memories (tenant, bank_id, id, body)
  SELECT 'default', CASE WHEN g % 2 = 0 THEN 'large' ELSE 'small' END, g, repeat(md5(g::text), 50)
  FROM generate_series(1, 2 * :rows) g;
INSERT INTO memories (tenant, bank_id, id, source_id, body) VALUES
  ('default', 'large', 0, 2, 'a fact derived from memory 2'), ('default', 'small', -1, 1, 'one derived from 1');
INSERT INTO memory_entities VALUES ('default', 2, 0, 'Mara'), ('default', 1, 0, 'Mara');
VACUUM ANALYZE memories;
SELECT count(*) AS changes_before FROM changes \gset
SELECT pg_stat_force_next_flush() \gset
SELECT seq_scan AS shared_scans_before FROM pg_stat_user_tables WHERE relname = 'memories_shared' \gset

\timing on
\echo 1. a partition created for the large bank
CREATE TABLE memories_bank_1 PARTITION OF memories FOR VALUES IN (1);
\timing off
SELECT pg_stat_force_next_flush() \gset
SELECT seq_scan - :shared_scans_before AS shared_partition_scans_by_the_creation
  FROM pg_stat_user_tables WHERE relname = 'memories_shared';
\timing on
\echo 2. the move
BEGIN;
SET LOCAL mnemos.moving = 'on';
UPDATE memories SET part = 1 WHERE tenant = 'default' AND bank_id = 'large';
COMMIT;
\timing off
\echo 1b. the same without the shared partition check: its rows are read to prove none belongs to the new one
ALTER TABLE memories_shared DROP CONSTRAINT memories_shared_part;
SELECT pg_stat_force_next_flush() \gset
SELECT seq_scan AS shared_scans_before, seq_tup_read AS shared_rows_before
  FROM pg_stat_user_tables WHERE relname = 'memories_shared' \gset
\timing on
CREATE TABLE memories_bank_2 PARTITION OF memories FOR VALUES IN (2);
\timing off
SELECT pg_stat_force_next_flush() \gset
SELECT seq_scan - :shared_scans_before AS shared_partition_scans, seq_tup_read - :shared_rows_before AS rows_read
  FROM pg_stat_user_tables WHERE relname = 'memories_shared';
\echo where the rows are
SELECT tableoid::regclass AS partition, bank_id, count(*) FROM memories GROUP BY 1, 2 ORDER BY 1, 2;
\echo 3. what refers to a moved memory followed it; what refers to one left in place stayed
SELECT id, part, source_id FROM memories WHERE id IN (0, -1) ORDER BY id;
SELECT memory_id, part FROM memory_entities ORDER BY memory_id;
\echo 4. row changes the move recorded (0: the triggers told it from a change)
SELECT count(*) - :changes_before AS changes_recorded_by_the_move FROM changes;
\echo 5. rows at the address (0,1): one per partition
SELECT count(*) AS rows_at_one_address FROM memories WHERE ctid = '(0,1)';
\c postgres
DROP DATABASE mnemos_partition_probe;
