/**
 * 004: the planner keeps no statistics on columns that hold what users wrote. ANALYZE copies sample values (most
 * common values, histogram bounds) into pg_statistic, which would put memory text, lexemes and payloads in a system
 * catalogue that hard deletion and encryption at rest do not reach. The plans need only the partition, id, time and
 * writer columns. Statistics already gathered on those columns (an external server's autovacuum) are removed where
 * the role may do so.
 */
export default `
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
ALTER TABLE jobs
  ALTER COLUMN payload SET STATISTICS 0,
  ALTER COLUMN result SET STATISTICS 0,
  ALTER COLUMN last_error SET STATISTICS 0;
DO $$
BEGIN
  IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
    DELETE FROM pg_statistic s USING pg_attribute a
    WHERE s.starelid = a.attrelid AND s.staattnum = a.attnum AND a.attstattarget = 0
      AND a.attrelid IN ('memories'::regclass, 'jobs'::regclass);
  END IF;
END $$;
`;
