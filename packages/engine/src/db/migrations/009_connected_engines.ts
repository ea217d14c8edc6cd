/**
 * 009: the engines connected to the database (crypto/connected-engines.ts), with the fingerprint of the master key
 * each serves with and its last heartbeat: `mnemos rotate-key` refuses to retire a key an engine still uses.
 */
export default `
CREATE TABLE connected_engines (
  id uuid PRIMARY KEY,
  host text NOT NULL,
  pid integer NOT NULL,
  key_fingerprint text,
  started_at timestamptz NOT NULL DEFAULT now(),
  heartbeat_at timestamptz NOT NULL DEFAULT now()
);
`;
