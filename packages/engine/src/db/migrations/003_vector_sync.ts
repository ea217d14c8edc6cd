/**
 * 003: lets each engine keep an in-memory copy of a bank's vectors in step with the database, whoever wrote to it.
 * Every memory row carries the id of the transaction that last wrote it (`writer_xid`); deletions leave a tombstone
 * with theirs. An engine that remembers the oldest transaction still running when it last synchronised
 * (pg_snapshot_xmin) fetches exactly the rows written since, including those of transactions that committed late.
 */
export default `
ALTER TABLE memories ADD COLUMN writer_xid xid8 NOT NULL DEFAULT pg_current_xact_id();
CREATE INDEX memories_bank_writer ON memories (tenant, bank_id, writer_xid);

CREATE TABLE memory_tombstones (
  tenant text NOT NULL,
  bank_id text NOT NULL,
  id uuid NOT NULL,
  writer_xid xid8 NOT NULL DEFAULT pg_current_xact_id(),
  deleted_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX memory_tombstones_bank_writer ON memory_tombstones (tenant, bank_id, writer_xid);
CREATE INDEX memory_tombstones_deleted_at ON memory_tombstones (deleted_at);

CREATE FUNCTION mnemos_memory_written() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.writer_xid := pg_current_xact_id();
  RETURN NEW;
END $$;
CREATE TRIGGER memories_written BEFORE UPDATE ON memories FOR EACH ROW EXECUTE FUNCTION mnemos_memory_written();

CREATE FUNCTION mnemos_memories_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO memory_tombstones (tenant, bank_id, id) SELECT tenant, bank_id, id FROM deleted_rows;
  RETURN NULL;
END $$;
CREATE TRIGGER memories_deleted AFTER DELETE ON memories
  REFERENCING OLD TABLE AS deleted_rows FOR EACH STATEMENT EXECUTE FUNCTION mnemos_memories_deleted();
`;
