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
 * holds none of its rows. The triggers move to the parent, which passes its row triggers on to every partition and
 * fires its statement triggers for changes in any of them.
 *
 * The two unique indexes are built on the present table first, under names an operator with a large table may build
 * beforehand with CREATE UNIQUE INDEX CONCURRENTLY (after adding the column, which is why it may exist already), so
 * that the migration's locks last only for the swap and the foreign keys' checks (docs/deploy.md).
 */
export default `
-- A concurrent build that failed leaves an invalid index, which is dropped and built again here.
DO $$
DECLARE
  leftover text;
BEGIN
  FOR leftover IN
    SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
    WHERE NOT i.indisvalid AND c.relname IN ('memories_shared_key', 'memories_shared_dedupe')
      AND pg_table_is_visible(c.oid)
  LOOP
    EXECUTE format('DROP INDEX %I', leftover);
  END LOOP;
END $$;

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
DROP TRIGGER memories_changed ON memories;
DROP TRIGGER memories_deleted ON memories;
DROP TRIGGER memories_history_deleted ON memories;
DROP TRIGGER memories_history_inserted ON memories;
DROP TRIGGER memories_history_updated ON memories;
DROP TRIGGER memories_statistics_deleted ON memories;
DROP TRIGGER memories_statistics_inserted ON memories;
DROP TRIGGER memories_statistics_updated ON memories;

ALTER TABLE memories RENAME TO memories_shared;
CREATE TABLE memories (LIKE memories_shared INCLUDING DEFAULTS) PARTITION BY LIST (part);
ALTER TABLE memories ADD CONSTRAINT memories_pkey PRIMARY KEY (tenant, id, part);
CREATE UNIQUE INDEX memories_dedupe ON memories (tenant, bank_id, space, content_hash, part) WHERE source_id IS NULL;
ALTER TABLE memories ATTACH PARTITION memories_shared DEFAULT;
-- As migration 004: no planner statistics on what users wrote, now also for the statistics of the whole (the parent's).
ALTER TABLE memories
  ALTER COLUMN text SET STATISTICS 0,
  ALTER COLUMN context SET STATISTICS 0,
  ALTER COLUMN metadata SET STATISTICS 0,
  ALTER COLUMN body_enc SET STATISTICS 0,
  ALTER COLUMN tags SET STATISTICS 0,
  ALTER COLUMN entities SET STATISTICS 0,
  ALTER COLUMN document_id SET STATISTICS 0,
  ALTER COLUMN content_hash SET STATISTICS 0,
  ALTER COLUMN fts SET STATISTICS 0;
ALTER TABLE memories ADD CONSTRAINT memories_source_fkey FOREIGN KEY (tenant, source_id, part)
  REFERENCES memories (tenant, id, part) ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE memory_entities ADD COLUMN part integer NOT NULL DEFAULT 0;
ALTER TABLE memory_entities ADD CONSTRAINT memory_entities_memory_fkey FOREIGN KEY (tenant, memory_id, part)
  REFERENCES memories (tenant, id, part) ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TRIGGER memories_changed BEFORE INSERT OR UPDATE ON memories
  FOR EACH ROW EXECUTE FUNCTION mnemos_memory_changed();
CREATE TRIGGER memories_deleted AFTER DELETE ON memories
  REFERENCING OLD TABLE AS deleted_rows FOR EACH STATEMENT EXECUTE FUNCTION mnemos_memories_deleted();
CREATE TRIGGER memories_history_deleted AFTER DELETE ON memories
  REFERENCING OLD TABLE AS went FOR EACH STATEMENT EXECUTE FUNCTION mnemos_history_deleted();
CREATE TRIGGER memories_history_inserted AFTER INSERT ON memories
  REFERENCING NEW TABLE AS arrived FOR EACH STATEMENT EXECUTE FUNCTION mnemos_history_inserted();
CREATE TRIGGER memories_history_updated AFTER UPDATE ON memories
  REFERENCING OLD TABLE AS went NEW TABLE AS arrived FOR EACH STATEMENT EXECUTE FUNCTION mnemos_history_updated();
CREATE TRIGGER memories_statistics_deleted AFTER DELETE ON memories
  REFERENCING OLD TABLE AS went FOR EACH STATEMENT EXECUTE FUNCTION mnemos_statistics_deleted();
CREATE TRIGGER memories_statistics_inserted AFTER INSERT ON memories
  REFERENCING NEW TABLE AS arrived FOR EACH STATEMENT EXECUTE FUNCTION mnemos_statistics_inserted();
CREATE TRIGGER memories_statistics_updated AFTER UPDATE ON memories
  REFERENCING OLD TABLE AS went NEW TABLE AS arrived FOR EACH STATEMENT EXECUTE FUNCTION mnemos_statistics_updated();
`;
