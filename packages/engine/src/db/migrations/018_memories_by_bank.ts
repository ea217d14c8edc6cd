import { dropInvalidIndexesSql } from './invalid-indexes.js';

/**
 * 018: memories partitioned by bank. The table becomes the parent of partitions by a per-bank number, `part`; the rows
 * stored so far become its shared partition, `memories_shared` (part 0, the default), without being copied: the
 * present table is attached as it is. A bank that grows large gets a partition of its own later, so that its vector
 * index is built from its rows alone (a build on the whole table reads every other bank's rows; docs/decisions.md,
 * "Large banks on a server: the index layouts measured").
 *
 * What partitioning asks of the keys: a unique index of a partitioned table holds its partition column, so the
 * primary key is (tenant, id, part) and the dedupe index holds `part`; the two foreign keys that refer to a memory
 * (a derived fact's source, an entity's memory) carry `part` and follow a memory that moves (ON UPDATE CASCADE). The
 * shared partition's CHECK (part = 0) lets a bank's partition be created without reading the shared one to prove it
 * holds none of its rows. The triggers move to the parent as they are defined, which passes its row triggers on to
 * every partition and fires its statement triggers for changes in any of them.
 *
 * The two unique indexes are built on the present table first, under names an operator with a large table may build
 * beforehand with CREATE UNIQUE INDEX CONCURRENTLY (after adding the column, which is why it may exist already), so
 * that the migration's locks last only for the swap and the foreign keys' checks (docs/deploy.md).
 */
export default `
-- A concurrent build that failed leaves an invalid index, which is built again here.
${dropInvalidIndexesSql(['memories_shared_key', 'memories_shared_dedupe'])}

ALTER TABLE memories ADD COLUMN IF NOT EXISTS part integer NOT NULL DEFAULT 0;
ALTER TABLE memories ADD CONSTRAINT memories_shared_part CHECK (part = 0);
CREATE UNIQUE INDEX IF NOT EXISTS memories_shared_key ON memories (tenant, id, part);
CREATE UNIQUE INDEX IF NOT EXISTS memories_shared_dedupe ON memories (tenant, bank_id, space, content_hash, part)
  WHERE source_id IS NULL;

-- What the parent takes over: the keys, the foreign keys and the triggers.
ALTER TABLE memory_entities DROP CONSTRAINT memory_entities_tenant_memory_id_fkey;
ALTER TABLE memories DROP CONSTRAINT memories_source_fkey;
ALTER TABLE memories DROP CONSTRAINT memories_pkey;
-- The parent's key adopts the partition's only if that is a key too, not a unique index alone.
ALTER TABLE memories ADD CONSTRAINT memories_shared_pkey PRIMARY KEY USING INDEX memories_shared_key;
DROP INDEX memories_dedupe;
-- The triggers (change numbers, history, keyword statistics, tombstones) leave the table, kept to be made again on the
-- parent as they are defined.
CREATE TEMP TABLE memories_triggers ON COMMIT DROP AS
  SELECT tgname AS name, pg_get_triggerdef(oid) AS definition FROM pg_trigger
  WHERE tgrelid = 'memories'::regclass AND NOT tgisinternal;
DO $$
DECLARE
  t record;
BEGIN
  FOR t IN SELECT name FROM memories_triggers LOOP
    EXECUTE format('DROP TRIGGER %I ON memories', t.name);
  END LOOP;
END $$;

ALTER TABLE memories RENAME TO memories_shared;
CREATE TABLE memories (LIKE memories_shared INCLUDING DEFAULTS) PARTITION BY LIST (part);
ALTER TABLE memories ADD CONSTRAINT memories_pkey PRIMARY KEY (tenant, id, part);
CREATE UNIQUE INDEX memories_dedupe ON memories (tenant, bank_id, space, content_hash, part) WHERE source_id IS NULL;
ALTER TABLE memories ATTACH PARTITION memories_shared DEFAULT;
-- As on the shared partition (migration 004): no planner statistics on what users wrote, now also for those of the
-- whole table.
DO $$
DECLARE
  c record;
BEGIN
  FOR c IN SELECT attname FROM pg_attribute
    WHERE attrelid = 'memories_shared'::regclass AND attnum > 0 AND NOT attisdropped AND attstattarget = 0
  LOOP
    EXECUTE format('ALTER TABLE memories ALTER COLUMN %I SET STATISTICS 0', c.attname);
  END LOOP;
END $$;
ALTER TABLE memories ADD CONSTRAINT memories_source_fkey FOREIGN KEY (tenant, source_id, part)
  REFERENCES memories (tenant, id, part) ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE memory_entities ADD COLUMN part integer NOT NULL DEFAULT 0;
ALTER TABLE memory_entities ADD CONSTRAINT memory_entities_memory_fkey FOREIGN KEY (tenant, memory_id, part)
  REFERENCES memories (tenant, id, part) ON DELETE CASCADE ON UPDATE CASCADE;

DO $$
DECLARE
  t record;
BEGIN
  FOR t IN SELECT definition FROM memories_triggers LOOP
    EXECUTE t.definition;
  END LOOP;
END $$;
`;
