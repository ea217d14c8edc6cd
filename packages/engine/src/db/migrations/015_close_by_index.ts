/**
 * 015: closing a bank's number reads the bank's newest change number from the change-number indexes. The close asked
 * whether any memory or tombstone of the bank is newer than its closed number; from a session's sixth call the
 * function's statements run on a plan made for any number, which guesses a third of the bank's rows qualify, so the
 * planner scanned the whole table for the first one (360 ms a recall at 1,000,000 memories). The bank's highest
 * number is an index lookup whatever number is asked about.
 */
export default `
CREATE OR REPLACE FUNCTION mnemos_bank_close(p_tenant text, p_bank text, p_wait_ms integer)
RETURNS TABLE (closed bigint, log_id uuid, pruned_to bigint, pending boolean)
LANGUAGE plpgsql AS $$
DECLARE
  closed_before bigint;
BEGIN
  SELECT b.change_seq INTO closed_before FROM banks b WHERE b.tenant = p_tenant AND b.bank_id = p_bank;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  pending := coalesce((SELECT m.change_seq FROM memories m WHERE m.tenant = p_tenant AND m.bank_id = p_bank
                       ORDER BY m.change_seq DESC LIMIT 1) > closed_before, false)
    OR coalesce((SELECT t.change_seq FROM memory_tombstones t WHERE t.tenant = p_tenant AND t.bank_id = p_bank
                 ORDER BY t.change_seq DESC LIMIT 1) > closed_before, false);
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
