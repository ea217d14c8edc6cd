/**
 * 011: expiry. `memories.expires_at` is when a memory is forgotten: from then on no read answers it, and the expiry
 * job (jobs/expiry.ts) deletes it with its facts as a DELETE does. The partial index serves that job's scan, which
 * only ever reads memories that have a date. `banks.retention_days` is a bank's default: a memory retained without an
 * `expires_at` of its own gets one that many days after it is stored (null: memories are kept).
 */
export default `
ALTER TABLE memories ADD COLUMN expires_at timestamptz;
CREATE INDEX memories_expires_at ON memories (expires_at) WHERE expires_at IS NOT NULL;
ALTER TABLE banks ADD COLUMN retention_days integer;
`;
