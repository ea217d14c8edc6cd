/**
 * SQL that drops those of `names` that are invalid indexes, as a failed CREATE INDEX CONCURRENTLY leaves them: a
 * migration that adopts indexes an operator may build beforehand builds these again instead.
 */
export function dropInvalidIndexesSql(names: readonly string[]): string {
  return `DO $$
DECLARE
  leftover text;
BEGIN
  FOR leftover IN
    SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
    WHERE NOT i.indisvalid AND c.relname IN (${names.map((n) => `'${n}'`).join(', ')})
      AND pg_table_is_visible(c.oid)
  LOOP
    EXECUTE format('DROP INDEX %I', leftover);
  END LOOP;
END $$;`;
}
