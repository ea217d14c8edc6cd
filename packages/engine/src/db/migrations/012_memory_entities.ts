/**
 * 012: the entities each memory names, one row per memory and name, so a bank's entities can be listed and looked up
 * without reading every memory.
 *
 * `key` is what a lookup matches: the lowercased name, or under encryption at rest its blind token (the keyed HMAC
 * the `entities` column of an encrypted memory holds). `name` is the name as written, NULL under encryption, where
 * `name_enc` holds it sealed with the bank's data key instead. `kind` says how it was found (memory/mentions.ts).
 * Rows go with their memory (ON DELETE CASCADE): a forgotten memory's names are forgotten with it.
 *
 * Facts stored before this migration keep their extracted entities: plaintext ones are copied here. Memories stored
 * before it have no cheap-extractor names (the extractor runs when a memory is written).
 */
export default `
CREATE TABLE memory_entities (
  tenant text NOT NULL,
  bank_id text NOT NULL,
  memory_id uuid NOT NULL,
  key text NOT NULL,
  name text,
  name_enc bytea,
  kind text NOT NULL,
  PRIMARY KEY (tenant, bank_id, key, memory_id, kind),
  FOREIGN KEY (tenant, memory_id) REFERENCES memories (tenant, id) ON DELETE CASCADE
);
CREATE INDEX memory_entities_memory ON memory_entities (tenant, memory_id);
-- Names are what users wrote: the planner keeps no sample of them (as migration 004 does for the memories' columns).
ALTER TABLE memory_entities
  ALTER COLUMN key SET STATISTICS 0,
  ALTER COLUMN name SET STATISTICS 0,
  ALTER COLUMN name_enc SET STATISTICS 0;

INSERT INTO memory_entities (tenant, bank_id, memory_id, key, name, kind)
SELECT DISTINCT ON (m.tenant, m.bank_id, lower(btrim(e.name)), m.id) m.tenant, m.bank_id, m.id, lower(btrim(e.name)),
  btrim(e.name), 'extracted'
FROM memories m, unnest(m.entities) AS e(name)
WHERE m.body_enc IS NULL AND btrim(e.name) <> '';
`;
