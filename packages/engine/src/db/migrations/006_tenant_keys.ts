import { dropInvalidIndexesSql } from './invalid-indexes.js';

/**
 * 006: the tenant leads every primary key and foreign key of tenant data, so the tables can be distributed by tenant
 * (Citus-style sharding: a key that does not hold the distribution column cannot be enforced across shards, and a
 * lookup that names the tenant goes to one shard). Memory ids and operation ids stay UUIDs, unique within a tenant.
 *
 * The keys are rebuilt in place on existing data. Each new primary key adopts a unique index of the same columns when
 * one exists already: an operator with a large database builds those indexes first with CREATE UNIQUE INDEX
 * CONCURRENTLY (names below), so the migration's exclusive locks last only for the constraint swap and the foreign-key
 * checks instead of the index builds. A concurrent build that failed leaves an invalid index, which is dropped and
 * built again here.
 */
export default `
${dropInvalidIndexesSql(['memories_tenant_id', 'operations_tenant_id', 'jobs_tenant_id', 'memory_tombstones_tenant_id'])}

ALTER TABLE memories DROP CONSTRAINT memories_source_id_fkey;
ALTER TABLE jobs DROP CONSTRAINT jobs_operation_id_fkey;

ALTER TABLE memories DROP CONSTRAINT memories_pkey;
CREATE UNIQUE INDEX IF NOT EXISTS memories_tenant_id ON memories (tenant, id);
ALTER TABLE memories ADD CONSTRAINT memories_pkey PRIMARY KEY USING INDEX memories_tenant_id;

ALTER TABLE operations DROP CONSTRAINT operations_pkey;
CREATE UNIQUE INDEX IF NOT EXISTS operations_tenant_id ON operations (tenant, id);
ALTER TABLE operations ADD CONSTRAINT operations_pkey PRIMARY KEY USING INDEX operations_tenant_id;

ALTER TABLE jobs DROP CONSTRAINT jobs_pkey;
CREATE UNIQUE INDEX IF NOT EXISTS jobs_tenant_id ON jobs (tenant, id);
ALTER TABLE jobs ADD CONSTRAINT jobs_pkey PRIMARY KEY USING INDEX jobs_tenant_id;

-- A memory id is deleted once (ids are never reused), so a tenant holds one tombstone per id; should two exist for
-- an id, one of them is kept. A tombstone table that already has a key of its own keeps it.
DO $$
BEGIN
  IF to_regclass('memory_tombstones') IS NOT NULL AND NOT EXISTS (
    SELECT 1 FROM pg_constraint WHERE conrelid = 'memory_tombstones'::regclass AND contype = 'p'
  ) THEN
    DELETE FROM memory_tombstones older USING memory_tombstones newer
    WHERE older.tenant = newer.tenant AND older.id = newer.id AND older.ctid < newer.ctid;
    CREATE UNIQUE INDEX IF NOT EXISTS memory_tombstones_tenant_id ON memory_tombstones (tenant, id);
    ALTER TABLE memory_tombstones ADD CONSTRAINT memory_tombstones_pkey
      PRIMARY KEY USING INDEX memory_tombstones_tenant_id;
  END IF;
END $$;

-- A derived fact and its source, a job and its operation, are rows of one tenant (on one shard).
ALTER TABLE memories ADD CONSTRAINT memories_source_fkey
  FOREIGN KEY (tenant, source_id) REFERENCES memories (tenant, id) ON DELETE CASCADE;
ALTER TABLE jobs ADD CONSTRAINT jobs_operation_fkey
  FOREIGN KEY (tenant, operation_id) REFERENCES operations (tenant, id) ON DELETE CASCADE;

-- Secondary indexes that served id lookups lead with the tenant too (the cascade of a delete looks up by source).
DROP INDEX memories_source;
CREATE INDEX memories_source ON memories (tenant, source_id);
DROP INDEX memories_batch_seq;
CREATE INDEX memories_batch_seq ON memories (tenant, batch_id, seq);
DROP INDEX jobs_operation;
CREATE INDEX jobs_operation ON jobs (tenant, operation_id);
DROP INDEX jobs_memory;
CREATE INDEX jobs_memory ON jobs (tenant, memory_id);
`;
