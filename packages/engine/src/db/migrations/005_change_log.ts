/**
 * 005: a logical change log per bank, in place of transaction ids. Each bank counts its changes (`banks.change_seq`);
 * every change to its memories takes the next number in the transaction that makes it, stamps it on the rows it
 * writes (`memories.change_seq`) and on the tombstones it leaves, and an engine's copy of the bank asks for what is
 * newer than the number it has. Taking a number updates the bank's row, and that row lock is held until commit, so a
 * bank's numbers commit in the order they were given: once a reader sees number n, every change up to n is visible
 * in the same snapshot, whatever runs elsewhere on the server.
 *
 * A transaction takes one number per bank (remembered in a transaction-local setting), so a retain of a thousand
 * memories bumps the counter once. `change_log_id` names the log: it changes when the numbers start over (a bank
 * deleted and created again, vectors re-embedded), which tells an engine to load the bank again. Tombstones up to
 * `tombstones_pruned_to` may be gone: an engine that is further behind compares ids instead.
 *
 * Existing rows read as change 0 (a constant default: no table rewrite); the transaction-id columns, their index and
 * trigger go, and so do the old tombstones (engines running this version start with empty copies).
 */
export default `
INSERT INTO banks (tenant, bank_id, name)
  SELECT DISTINCT tenant, bank_id, bank_id FROM memories
  ON CONFLICT (tenant, bank_id) DO NOTHING;

ALTER TABLE banks
  ADD COLUMN change_seq bigint NOT NULL DEFAULT 0,
  ADD COLUMN tombstones_pruned_to bigint NOT NULL DEFAULT 0,
  ADD COLUMN change_log_id uuid NOT NULL DEFAULT gen_random_uuid();

DROP TRIGGER memories_written ON memories;
DROP FUNCTION mnemos_memory_written();
DROP INDEX memories_bank_writer;
ALTER TABLE memories DROP COLUMN writer_xid;
ALTER TABLE memories ADD COLUMN change_seq bigint NOT NULL DEFAULT 0;
CREATE INDEX memories_bank_change ON memories (tenant, bank_id, change_seq);

DELETE FROM memory_tombstones;
DROP INDEX memory_tombstones_bank_writer;
ALTER TABLE memory_tombstones DROP COLUMN writer_xid;
ALTER TABLE memory_tombstones ADD COLUMN change_seq bigint NOT NULL;
CREATE INDEX memory_tombstones_bank_change ON memory_tombstones (tenant, bank_id, change_seq);

-- The bank's number for the current transaction: the one it already took, or the next one. A retain (p_retain)
-- creates the bank on its first write and stamps its last write; other changes answer NULL for a bank that is gone.
CREATE FUNCTION mnemos_bank_change(p_tenant text, p_bank text, p_retain boolean) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
  mark text := length(p_tenant) || ':' || length(p_bank) || ':' || p_tenant || p_bank || ':';
  held text := current_setting('mnemos.bank_change', true);
  taken bigint;
BEGIN
  IF starts_with(held, mark) THEN
    RETURN substr(held, length(mark) + 1)::bigint;
  END IF;
  IF p_retain THEN
    INSERT INTO banks AS b (tenant, bank_id, name, last_write_at, change_seq)
    VALUES (p_tenant, p_bank, p_bank, now(), 1)
    ON CONFLICT (tenant, bank_id) DO UPDATE SET last_write_at = now(), change_seq = b.change_seq + 1
    RETURNING b.change_seq INTO taken;
  ELSE
    UPDATE banks SET change_seq = change_seq + 1 WHERE tenant = p_tenant AND bank_id = p_bank
    RETURNING change_seq INTO taken;
  END IF;
  IF taken IS NOT NULL THEN
    PERFORM set_config('mnemos.bank_change', mark || taken, true);
  END IF;
  RETURN taken;
END $$;

CREATE FUNCTION mnemos_memory_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    NEW.change_seq := mnemos_bank_change(NEW.tenant, NEW.bank_id, true);
  ELSE
    NEW.change_seq := COALESCE(mnemos_bank_change(NEW.tenant, NEW.bank_id, false), OLD.change_seq);
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER memories_changed BEFORE INSERT OR UPDATE ON memories
  FOR EACH ROW EXECUTE FUNCTION mnemos_memory_changed();

-- Deleted memories leave tombstones under their bank's number; a deleted bank leaves none (its log ends with it).
CREATE OR REPLACE FUNCTION mnemos_memories_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO memory_tombstones (tenant, bank_id, id, change_seq)
  SELECT d.tenant, d.bank_id, d.id, v.taken
  FROM deleted_rows d
  JOIN (SELECT tenant, bank_id, mnemos_bank_change(tenant, bank_id, false) AS taken
        FROM (SELECT DISTINCT tenant, bank_id FROM deleted_rows) banks_touched) v USING (tenant, bank_id)
  WHERE v.taken IS NOT NULL;
  RETURN NULL;
END $$;
`;
