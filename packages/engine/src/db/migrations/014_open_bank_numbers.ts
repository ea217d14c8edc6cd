/**
 * 014: writers into one bank no longer take turns on its row. Until now every write bumped `banks.change_seq` and
 * held that row lock until it committed, so one bank's writes committed one at a time. Now `banks.change_seq` is the
 * bank's closed number: every change up to it has committed, and no later change takes it. A write takes the open
 * number (the closed one plus one) and holds a share lock on the bank's row until it commits; any number of writers
 * share the open number and the lock at once. A reader closes the open number (mnemos_bank_close) before it reads:
 * the close locks the row `FOR NO KEY UPDATE`, which no writer holds a share of, so it happens only once no writer
 * of the open number is in flight, and every later writer takes the next number. A reader that reads up to the closed
 * number therefore never skips a change that commits later; it also reads the open number's changes committed so far
 * (read-your-writes), and reads them again next time, until the number is closed.
 *
 * A retain takes the share lock (but the first one into a bank without its data key under encryption at rest, which
 * stores the key on the row); any other change (edits, deletions) locks the row `FOR NO KEY UPDATE` as before, so
 * changes to existing memories of one bank still take turns and never wait on each other's memory rows in a cycle.
 * Deleting a bank (its row, `FOR UPDATE`) waits for its writers, as before. A retain stamps `last_write_at` only when
 * it is a second old and no other writer holds the row (the stamp locks the row until commit, which other writers
 * would wait for).
 */
export default `
CREATE OR REPLACE FUNCTION mnemos_bank_change(p_tenant text, p_bank text, p_retain boolean) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
  mark text := length(p_tenant) || ':' || length(p_bank) || ':' || p_tenant || p_bank || ':';
  held text := current_setting('mnemos.bank_change', true);
  taken bigint;
BEGIN
  IF starts_with(held, mark) THEN
    RETURN substr(held, length(mark) + 1)::bigint;
  END IF;
  -- A retain makes the bank when it is missing, and again should a deletion of the bank commit in between.
  LOOP
    IF p_retain THEN
      INSERT INTO banks (tenant, bank_id, name, last_write_at) VALUES (p_tenant, p_bank, p_bank, now())
        ON CONFLICT (tenant, bank_id) DO NOTHING;
      PERFORM 1 FROM banks WHERE tenant = p_tenant AND bank_id = p_bank
        AND (last_write_at IS NULL OR last_write_at < now() - interval '1 second')
        FOR NO KEY UPDATE SKIP LOCKED;
      IF FOUND THEN
        UPDATE banks SET last_write_at = now() WHERE tenant = p_tenant AND bank_id = p_bank;
      END IF;
    END IF;
    -- Under encryption at rest, the first write into a bank without a data key stores the key on the bank's row in
    -- the same transaction: two writers that shared the row would then wait on each other, so it takes it alone.
    IF p_retain AND NOT EXISTS (SELECT 1 FROM banks WHERE tenant = p_tenant AND bank_id = p_bank
                                AND wrapped_key IS NULL AND EXISTS (SELECT 1 FROM mnemos_meta WHERE key = 'encryption')) THEN
      SELECT change_seq + 1 INTO taken FROM banks WHERE tenant = p_tenant AND bank_id = p_bank FOR SHARE;
    ELSE
      SELECT change_seq + 1 INTO taken FROM banks WHERE tenant = p_tenant AND bank_id = p_bank FOR NO KEY UPDATE;
    END IF;
    EXIT WHEN taken IS NOT NULL OR NOT p_retain;
  END LOOP;
  IF taken IS NOT NULL THEN
    PERFORM set_config('mnemos.bank_change', mark || taken, true);
  END IF;
  RETURN taken;
END $$;

-- Closes the bank's open number when a change under it has committed: at once when no writer holds the bank's row,
-- else (p_wait_ms > 0) after the writers in flight commit if they do within p_wait_ms; when they do not, it answers
-- pending. Answers the bank's log state after it, and whether committed changes remain past the closed number; no
-- row for a bank that does not exist.
CREATE FUNCTION mnemos_bank_close(p_tenant text, p_bank text, p_wait_ms integer)
RETURNS TABLE (closed bigint, log_id uuid, pruned_to bigint, pending boolean)
LANGUAGE plpgsql AS $$
DECLARE
  closed_before bigint;
BEGIN
  SELECT b.change_seq INTO closed_before FROM banks b WHERE b.tenant = p_tenant AND b.bank_id = p_bank;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  pending := EXISTS (SELECT 1 FROM memories m WHERE m.tenant = p_tenant AND m.bank_id = p_bank AND m.change_seq > closed_before)
    OR EXISTS (SELECT 1 FROM memory_tombstones t
               WHERE t.tenant = p_tenant AND t.bank_id = p_bank AND t.change_seq > closed_before);
  IF pending THEN
    IF p_wait_ms > 0 THEN
      PERFORM set_config('lock_timeout', p_wait_ms || 'ms', true);
      BEGIN
        PERFORM 1 FROM banks b WHERE b.tenant = p_tenant AND b.bank_id = p_bank FOR NO KEY UPDATE;
      EXCEPTION WHEN lock_not_available THEN
        RETURN QUERY SELECT b.change_seq, b.change_log_id, b.tombstones_pruned_to, true
          FROM banks b WHERE b.tenant = p_tenant AND b.bank_id = p_bank;
        RETURN;
      END;
    ELSE
      PERFORM 1 FROM banks b WHERE b.tenant = p_tenant AND b.bank_id = p_bank FOR NO KEY UPDATE SKIP LOCKED;
    END IF;
    IF FOUND THEN
      UPDATE banks b SET change_seq = b.change_seq + 1 WHERE b.tenant = p_tenant AND b.bank_id = p_bank;
      pending := false;
    END IF;
  END IF;
  RETURN QUERY SELECT b.change_seq, b.change_log_id, b.tombstones_pruned_to, pending
    FROM banks b WHERE b.tenant = p_tenant AND b.bank_id = p_bank;
END $$;
`;
