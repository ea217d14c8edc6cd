/**
 * 010: a memory's versions and its validity over time.
 *
 * `memories.valid_from` is when the memory became true; null reads as its date (`occurred_at`), else its creation, so
 * no row is rewritten. `valid_to` and `superseded_by` (migration 001) close it.
 *
 * `memory_history` holds a memory's versions: a copy of its body and validity after each change, numbered from 1.
 * Statement triggers on `memories` write them, so every writer (retain, edits, fact extraction, deletes, a clear)
 * appends its version in its own transaction without knowing of history. A bank's `history` setting turns the copies
 * off ('off'); a delete still wipes the bodies of the memory's earlier versions whatever the setting, and leaves, when
 * history is on, a tombstone version without a body: forgetting a memory forgets every copy of what it said. Bodies
 * are copied as stored: ciphertext (bound to the memory's id) under encryption at rest, so history is encrypted as the
 * memory is. A writer that changes only how a body is stored (encrypt-existing) sets `mnemos.history` to 'skip' for
 * its transaction. The operation a change belongs to is read from `mnemos.operation_id` when the writer set it.
 */
const snapshotColumns = `tenant, bank_id, memory_id, version, change, space, text, context, metadata, entities, body_enc,
  tags, state, occurred_at, valid_from, valid_to, superseded_by, operation_id`;

/** The row `n` of memories as its next version (`change` an SQL expression), when its bank keeps history. */
function snapshotOf(change: string, body: boolean): string {
  const columns = body
    ? 'n.text, n.context, n.metadata, n.entities, n.body_enc'
    : "NULL::text, NULL::text, NULL::jsonb, '{}'::text[], NULL::bytea";
  return `SELECT n.tenant, n.bank_id, n.id,
    COALESCE((SELECT max(h.version) FROM memory_history h
              WHERE h.tenant = n.tenant AND h.bank_id = n.bank_id AND h.memory_id = n.id), 0) + 1,
    ${change}, n.space, ${columns}, n.tags, n.state, n.occurred_at,
    COALESCE(n.valid_from, n.occurred_at, n.created_at), n.valid_to, n.superseded_by,
    NULLIF(current_setting('mnemos.operation_id', true), '')`;
}

const keepsHistory = `JOIN banks b ON b.tenant = n.tenant AND b.bank_id = n.bank_id AND b.history = 'on'`;
const skipped = `COALESCE(current_setting('mnemos.history', true), '') = 'skip'`;

/** What a version shows; a change to anything else (the vector, the change number) appends none. */
const shown = `text, context, metadata, body_enc, tags, state, occurred_at, valid_from, valid_to, superseded_by`;

export default `
ALTER TABLE banks ADD COLUMN history text NOT NULL DEFAULT 'on';
ALTER TABLE memories ADD COLUMN valid_from timestamptz;

CREATE TABLE memory_history (
  tenant text NOT NULL,
  bank_id text NOT NULL,
  memory_id uuid NOT NULL,
  version integer NOT NULL,
  change text NOT NULL,
  space text NOT NULL,
  text text,
  context text,
  metadata jsonb,
  entities text[] NOT NULL DEFAULT '{}',
  body_enc bytea,
  tags text[] NOT NULL DEFAULT '{}',
  state text NOT NULL,
  occurred_at timestamptz,
  valid_from timestamptz NOT NULL,
  valid_to timestamptz,
  superseded_by uuid,
  changed_at timestamptz NOT NULL DEFAULT now(),
  operation_id text,
  PRIMARY KEY (tenant, bank_id, memory_id, version),
  FOREIGN KEY (tenant, bank_id) REFERENCES banks (tenant, bank_id) ON DELETE CASCADE
);

CREATE FUNCTION mnemos_history_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF ${skipped} THEN RETURN NULL; END IF;
  INSERT INTO memory_history (${snapshotColumns})
  ${snapshotOf("'create'", true)} FROM arrived n ${keepsHistory};
  RETURN NULL;
END $$;
CREATE TRIGGER memories_history_inserted AFTER INSERT ON memories
  REFERENCING NEW TABLE AS arrived FOR EACH STATEMENT EXECUTE FUNCTION mnemos_history_inserted();

CREATE FUNCTION mnemos_history_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF ${skipped} THEN RETURN NULL; END IF;
  INSERT INTO memory_history (${snapshotColumns})
  ${snapshotOf(
    `CASE
      WHEN o.state <> n.state THEN CASE WHEN n.state = 'invalidated' THEN 'invalidate' ELSE 'restore' END
      WHEN n.superseded_by IS NOT NULL AND n.superseded_by IS DISTINCT FROM o.superseded_by THEN 'supersede'
      WHEN n.valid_to IS NOT NULL AND n.valid_to IS DISTINCT FROM o.valid_to THEN 'expire'
      WHEN n.valid_to IS NULL AND o.valid_to IS NOT NULL THEN 'restore'
      ELSE 'update' END`,
    true,
  )}
  FROM arrived n JOIN went o ON o.id = n.id ${keepsHistory}
  WHERE (${shown.replace(/(\w+)/g, 'o.$1')}) IS DISTINCT FROM (${shown.replace(/(\w+)/g, 'n.$1')});
  RETURN NULL;
END $$;
CREATE TRIGGER memories_history_updated AFTER UPDATE ON memories
  REFERENCING OLD TABLE AS went NEW TABLE AS arrived FOR EACH STATEMENT EXECUTE FUNCTION mnemos_history_updated();

CREATE FUNCTION mnemos_history_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE memory_history h SET text = NULL, context = NULL, metadata = NULL, entities = '{}', body_enc = NULL
  FROM went w
  WHERE h.tenant = w.tenant AND h.bank_id = w.bank_id AND h.memory_id = w.id
    AND (h.text IS NOT NULL OR h.context IS NOT NULL OR h.metadata IS NOT NULL OR h.body_enc IS NOT NULL
      OR cardinality(h.entities) > 0);
  INSERT INTO memory_history (${snapshotColumns})
  ${snapshotOf("'delete'", false)} FROM went n ${keepsHistory};
  RETURN NULL;
END $$;
CREATE TRIGGER memories_history_deleted AFTER DELETE ON memories
  REFERENCING OLD TABLE AS went FOR EACH STATEMENT EXECUTE FUNCTION mnemos_history_deleted();
`;
