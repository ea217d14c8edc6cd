/**
 * 008: keyword statistics per bank, kept by the writes themselves: how many memories each bank holds
 * (`banks.memory_count`) and how many of them hold each keyword-index term (`bank_term_counts`). The Postgres tier of
 * recall reads a bank's size and its query terms' document frequencies from them: counting them from the rows costs
 * a pass over every row holding a common term, which grows with the bank. Every memory counts, whatever its space,
 * state or vector, as the in-memory tier counts them (filters are not applied to BM25's statistics).
 *
 * Statement triggers with transition tables keep them: one grouped upsert per statement, whatever the number of rows.
 * A bank's changes already hold its row lock until commit (migration 005), so two writers of one bank never update
 * its counts in an order that could deadlock. Decrements never insert: the counts of a bank deleted first (its row,
 * then its memories) are gone with it, and nothing inserts them again. A term no memory holds any more is deleted, not
 * kept at zero: the terms are the keyword index's (english lexemes, or the bank's keyed tokens under encryption at
 * rest), and a plaintext database encrypted in place must keep none of its words.
 */
/**
 * The statement that applies a statement's changed rows, given as `changed` (tenant, bank_id, fts, sign): +1 for a row
 * that arrived and -1 for one that went; what cancels out (an update that kept the bank and the text) writes nothing.
 * Its parts see one snapshot, so the decrement and the delete of a term that reaches zero touch different rows.
 */
function applyChanges(changed: string): string {
  return `WITH changed AS (${changed}),
  terms AS (
    SELECT c.tenant, c.bank_id, u.lexeme AS term, sum(c.sign) AS delta
    FROM changed c, unnest(c.fts) u GROUP BY 1, 2, 3 HAVING sum(c.sign) <> 0
  ),
  added AS (
    INSERT INTO bank_term_counts AS t (tenant, bank_id, term, memories)
    SELECT tenant, bank_id, term, delta FROM terms WHERE delta > 0
    ON CONFLICT (tenant, bank_id, term) DO UPDATE SET memories = t.memories + EXCLUDED.memories
  ),
  removed AS (
    UPDATE bank_term_counts t SET memories = t.memories + d.delta
    FROM terms d WHERE d.delta < 0 AND t.tenant = d.tenant AND t.bank_id = d.bank_id AND t.term = d.term
      AND t.memories + d.delta > 0
  ),
  emptied AS (
    DELETE FROM bank_term_counts t
    USING terms d WHERE d.delta < 0 AND t.tenant = d.tenant AND t.bank_id = d.bank_id AND t.term = d.term
      AND t.memories + d.delta <= 0
  )
  UPDATE banks b SET memory_count = b.memory_count + s.delta
  FROM (SELECT tenant, bank_id, sum(sign) AS delta FROM changed GROUP BY 1, 2 HAVING sum(sign) <> 0) s
  WHERE b.tenant = s.tenant AND b.bank_id = s.bank_id`;
}

/** A statement trigger's function: applies the rows of its transition tables (they are visible only in its body). */
function statisticsTrigger(name: string, changed: string): string {
  return `CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  ${applyChanges(changed)};
  RETURN NULL;
END $$;`;
}

export default `
ALTER TABLE banks ADD COLUMN memory_count bigint NOT NULL DEFAULT 0;

CREATE TABLE bank_term_counts (
  tenant text NOT NULL,
  bank_id text NOT NULL,
  term text NOT NULL,
  memories bigint NOT NULL,
  PRIMARY KEY (tenant, bank_id, term),
  FOREIGN KEY (tenant, bank_id) REFERENCES banks (tenant, bank_id) ON DELETE CASCADE
);

INSERT INTO bank_term_counts (tenant, bank_id, term, memories)
  SELECT m.tenant, m.bank_id, u.lexeme, count(*) FROM memories m, unnest(m.fts) u GROUP BY 1, 2, 3;
UPDATE banks b SET memory_count = s.n
  FROM (SELECT tenant, bank_id, count(*) AS n FROM memories GROUP BY 1, 2) s
  WHERE b.tenant = s.tenant AND b.bank_id = s.bank_id;

${statisticsTrigger('mnemos_statistics_inserted', 'SELECT tenant, bank_id, fts, 1 AS sign FROM arrived')}
CREATE TRIGGER memories_statistics_inserted AFTER INSERT ON memories
  REFERENCING NEW TABLE AS arrived FOR EACH STATEMENT EXECUTE FUNCTION mnemos_statistics_inserted();

${statisticsTrigger(
  'mnemos_statistics_updated',
  'SELECT tenant, bank_id, fts, 1 AS sign FROM arrived UNION ALL SELECT tenant, bank_id, fts, -1 FROM went',
)}
CREATE TRIGGER memories_statistics_updated AFTER UPDATE ON memories
  REFERENCING OLD TABLE AS went NEW TABLE AS arrived FOR EACH STATEMENT EXECUTE FUNCTION mnemos_statistics_updated();

${statisticsTrigger('mnemos_statistics_deleted', 'SELECT tenant, bank_id, fts, -1 AS sign FROM went')}
CREATE TRIGGER memories_statistics_deleted AFTER DELETE ON memories
  REFERENCING OLD TABLE AS went FOR EACH STATEMENT EXECUTE FUNCTION mnemos_statistics_deleted();
`;
