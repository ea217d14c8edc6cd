/**
 * 019: a large bank's own partition. A bank's row says which partition of `memories` holds its memories (`part`; 0,
 * the shared one, until the bank is moved). Retains read the bank's number under the share lock they hold on its row,
 * so no retain writes the shared number once the bank has moved (db/bank-partition.ts moves a bank under the row's
 * exclusive lock).
 *
 * A move rewrites every row of the bank with a new `part` and nothing else: it is not a change to any memory. The
 * triggers (change numbers, history, keyword statistics, tombstones) therefore do not fire while the transaction-local
 * setting `mnemos.moving` is on: each trigger gets that condition, and is otherwise made again as it is defined.
 *
 * A bank's partition needs the indexes the shared one has (keywords, change numbers, documents, expiry...): each of
 * the engine's (`memories_...`) becomes an index of the partitioned table, which every partition made later gets. The
 * shared partition's index is attached to it as it is (renamed `memories_shared_...`; the parent takes its name), so
 * nothing is built. Left alone: the per-bank vector indexes, the key and dedupe indexes (attached already, migration
 * 018), and the unique index on (tenant, id), which a partitioned table cannot have without the partition number (the
 * key has it).
 */
export default `
ALTER TABLE banks ADD COLUMN part integer NOT NULL DEFAULT 0;
-- Recall names a bank's partition (vectors/storage/postgres-index.ts). A column without statistics is taken to match
-- one row in 200, so the planner would take a bank in the shared partition to be 200 times smaller than it is and
-- choose plans for a small one (docs/decisions.md has the first recall it slowed): the column migration 018 added gets
-- its statistics now, from a sample, rather than at the server's next analysis of the table.
ANALYZE memories_shared (part);

DO $$
DECLARE
  t record;
BEGIN
  FOR t IN SELECT tgname AS name, pg_get_triggerdef(oid) AS definition FROM pg_trigger
    WHERE tgrelid = 'memories'::regclass AND NOT tgisinternal
  LOOP
    -- A trigger with a condition of its own would need the two joined; none has one.
    IF t.definition LIKE '% WHEN (%' THEN
      RAISE EXCEPTION 'trigger % has a condition already', t.name;
    END IF;
    EXECUTE format('DROP TRIGGER %I ON memories', t.name);
    EXECUTE replace(t.definition, ' EXECUTE FUNCTION ',
      ' WHEN (current_setting(''mnemos.moving'', true) IS DISTINCT FROM ''on'') EXECUTE FUNCTION ');
  END LOOP;
END $$;

DO $$
DECLARE
  i record;
BEGIN
  FOR i IN SELECT c.relname AS name, 'memories_shared_' || substr(c.relname, length('memories_') + 1) AS shared_name,
      pg_get_indexdef(c.oid) AS definition
    FROM pg_index x JOIN pg_class c ON c.oid = x.indexrelid
    WHERE x.indrelid = 'memories_shared'::regclass AND x.indisvalid AND NOT x.indisunique
      AND c.relname LIKE 'memories\\_%' AND c.relname NOT LIKE 'memories\\_hnsw\\_%'
      AND NOT EXISTS (SELECT 1 FROM pg_inherits h WHERE h.inhrelid = c.oid)
  LOOP
    EXECUTE format('ALTER INDEX %I RENAME TO %I', i.name, i.shared_name);
    EXECUTE regexp_replace(i.definition, ' ON (\\S+\\.)?memories_shared ', ' ON ONLY \\1memories ');
    EXECUTE format('ALTER INDEX %I ATTACH PARTITION %I', i.name, i.shared_name);
  END LOOP;
END $$;
`;
