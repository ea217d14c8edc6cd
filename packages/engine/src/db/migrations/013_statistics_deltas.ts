/**
 * 013: the keyword statistics of migration 008 (a bank's size, each term's document frequency) are appended by the
 * writes as delta rows instead of being added to the totals in place. Adding in place updated the bank's row and one
 * row per term, and held those row locks until commit, so every writer of a bank took its turn behind the others on
 * them; an appended row locks nothing another writer needs. Readers add a bank's deltas to its totals
 * (vectors/storage/postgres-index.ts), and a background step folds the deltas into the totals
 * (vectors/storage/statistics-folder.ts), which keeps the deltas few and removes terms that reached zero.
 *
 * A delta row is (bank, term, +n or -n); a NULL term is the bank's size. What a statement's rows cancel out writes
 * nothing. Deltas of a bank that is gone are not written (a bank deleted first, its row then its memories, leaves no
 * counts behind, as before), and they go with the bank when it is deleted.
 */
function appendChanges(changed: string): string {
  return `WITH changed AS (${changed}),
  terms AS (
    SELECT c.tenant, c.bank_id, u.lexeme AS term, sum(c.sign) AS delta
    FROM changed c, unnest(c.fts) u GROUP BY 1, 2, 3 HAVING sum(c.sign) <> 0
  ),
  sizes AS (
    SELECT tenant, bank_id, NULL::text AS term, sum(sign) AS delta FROM changed GROUP BY 1, 2 HAVING sum(sign) <> 0
  )
  INSERT INTO bank_statistics_deltas (tenant, bank_id, term, memories)
  SELECT d.tenant, d.bank_id, d.term, d.delta FROM (SELECT * FROM terms UNION ALL SELECT * FROM sizes) d
  WHERE EXISTS (SELECT 1 FROM banks b WHERE b.tenant = d.tenant AND b.bank_id = d.bank_id)`;
}

function statisticsTrigger(name: string, changed: string): string {
  return `CREATE OR REPLACE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  ${appendChanges(changed)};
  RETURN NULL;
END $$;`;
}

export default `
CREATE TABLE bank_statistics_deltas (
  tenant text NOT NULL,
  bank_id text NOT NULL,
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  term text,
  memories bigint NOT NULL,
  PRIMARY KEY (tenant, bank_id, id),
  FOREIGN KEY (tenant, bank_id) REFERENCES banks (tenant, bank_id) ON DELETE CASCADE
);
CREATE INDEX bank_statistics_deltas_term ON bank_statistics_deltas (tenant, bank_id, term);

${statisticsTrigger('mnemos_statistics_inserted', 'SELECT tenant, bank_id, fts, 1 AS sign FROM arrived')}
${statisticsTrigger(
  'mnemos_statistics_updated',
  'SELECT tenant, bank_id, fts, 1 AS sign FROM arrived UNION ALL SELECT tenant, bank_id, fts, -1 FROM went',
)}
${statisticsTrigger('mnemos_statistics_deleted', 'SELECT tenant, bank_id, fts, -1 AS sign FROM went')}
`;
