import type { Queryable } from '../db/database.js';
import { queryTerms, TEXT_SEARCH_CONFIG } from '../keywords/text-search.js';
import { LexemeCache } from '../keywords/lexemes.js';
import type { Metadata } from '../memory/types.js';

/**
 * The one seam between the memory store and encryption at rest. The store hands every memory body it writes to
 * `BodyCodec.forWrite(...).seal(...)` and every row it reads to `openRows`; keyword search asks `keywordQuery` for the
 * tsquery and the document side gets its tsvector from `seal`. Two implementations: the plaintext codec (a no-op:
 * bodies stay in the text/context/metadata columns and Postgres's `english` configuration indexes them) and the
 * encrypting codec (encrypting-codec.ts).
 *
 * The engine opens one codec at start and hands it to the memory store (memory/store.ts) and to the other modules that
 * seal or open bodies.
 */

/** A memory's private fields, as the API shows them. */
export interface PlainBody {
  text: string;
  context: string | null;
  metadata: Metadata;
  entities: string[];
}

/** What the store writes for a body: the plaintext columns (null/empty when encrypted), the ciphertext, the index. */
export interface SealedBody {
  text: string | null;
  context: string | null;
  metadata: Metadata;
  /** Entity names, or their blind tokens when encrypted (equal names give equal tokens within a bank). */
  entities: string[];
  bodyEnc: Buffer | null;
  /** A tsvector literal (the blind index) to cast with ::tsvector; null means "index `text` with documentTsvector". */
  fts: string | null;
}

export interface BankCodec {
  /** Asynchronous because indexing a long body under encryption is done in slices that let other requests run. */
  seal(id: string, body: PlainBody): Promise<SealedBody>;
  /** The stored form of a content hash (the plain SHA-256 hex retain computes, or its keyed HMAC). */
  dedupHash(plainHash: string): string;
  /** An entity name as stored: its lookup key (the lowercased name, or its blind token) and the name or its ciphertext. */
  sealEntity(name: string): SealedEntity;
}

/** An entity name as the entities table stores it (migration 012). */
export interface SealedEntity {
  key: string;
  name: string | null;
  nameEnc: Buffer | null;
}

/** An entity row's stored name: plain, or sealed (under encryption at rest). */
export interface StoredEntityName {
  key: string;
  name: string | null;
  name_enc: Uint8Array | null;
}

/** A tsquery for keyword search: `sql(placeholder)` is the SQL expression, `value` the parameter to bind. */
export interface KeywordQuery {
  sql(param: string): string;
  value: string;
}

/** The columns of a memory row the codec reads. */
export interface EncodedRow {
  id: string;
  bank_id: string;
  text: string | null;
  context: string | null;
  metadata: Metadata | null;
  body_enc: Uint8Array | null;
  entities: string[];
}

export interface BodyCodec {
  readonly encrypted: boolean;
  /** The bank's codec for writing; with encryption, creates the bank's data key (and bank row) when it has none. */
  forWrite(q: Queryable, tenant: string, bankId: string): Promise<BankCodec>;
  /** Stored dedup hash -> plain hash, for a lookup (empty when the bank has no key yet: nothing stored). */
  dedupHashes(q: Queryable, tenant: string, bankId: string, plainHashes: string[]): Promise<Map<string, string>>;
  /**
   * The bodies of rows read from `memories`, in order. A row whose ciphertext fails to authenticate (tampered, moved
   * from another row, or its key gone) gives undefined: it is reported and must never be returned.
   */
  openRows(q: Queryable, tenant: string, rows: readonly EncodedRow[]): Promise<Array<PlainBody | undefined>>;
  /**
   * The tsquery for `query` over the banks' keyword index: `any` ORs the terms (recall), `all` ANDs them (list
   * filter). Undefined when no term can match.
   */
  keywordQuery(
    q: Queryable,
    tenant: string,
    bankIds: readonly string[],
    query: string,
    mode: 'any' | 'all',
  ): Promise<KeywordQuery | undefined>;
  /**
   * The terms of `query` as the banks' keyword index stores them (english lexemes, or blind tokens with encryption),
   * at most 64: what recall's in-memory keyword arm looks up. Asks the database only for words never seen before.
   */
  indexTerms(q: Queryable, tenant: string, bankIds: readonly string[], query: string): Promise<string[]>;
  /** The lookup key of an entity name in a bank; undefined when the bank has no key yet (so holds no entity). */
  entityKey(q: Queryable, tenant: string, bankId: string, name: string): Promise<string | undefined>;
  /** The names of entity rows, in order; a sealed name that fails to open gives undefined (and is reported). */
  openEntityNames(
    q: Queryable,
    tenant: string,
    bankId: string,
    rows: readonly StoredEntityName[],
  ): Promise<Array<string | undefined>>;
}

/** How entity names are compared: case and surrounding spaces do not matter. */
export const entityKeyOf = (name: string): string => name.trim().toLowerCase();

const plaintextBank: BankCodec = {
  seal: async (_id, b) => ({
    text: b.text,
    context: b.context,
    metadata: b.metadata,
    entities: b.entities,
    bodyEnc: null,
    fts: null,
  }),
  dedupHash: (h) => h,
  sealEntity: (name) => ({ key: entityKeyOf(name), name, nameEnc: null }),
};

/** Encryption off: bodies are stored as they are. */
export const plaintextCodec: BodyCodec = {
  encrypted: false,
  forWrite: async () => plaintextBank,
  dedupHashes: async (_q, _t, _b, hashes) => new Map(hashes.map((h) => [h, h])),
  openRows: async (_q, _t, rows) =>
    rows.map((r) => {
      if (r.body_enc !== null) return undefined;
      return { text: r.text ?? '', context: r.context, metadata: r.metadata ?? {}, entities: r.entities };
    }),
  keywordQuery: async (_q, _t, _b, query, mode) => {
    if (mode === 'all') return { sql: (p) => `plainto_tsquery('${TEXT_SEARCH_CONFIG}', ${p})`, value: query };
    const terms = queryTerms(query);
    return terms.length === 0
      ? undefined
      : { sql: (p) => `to_tsquery('${TEXT_SEARCH_CONFIG}', ${p})`, value: terms.join(' | ') };
  },
  indexTerms: (q, _t, _b, query) => plaintextLexemes.terms(q, query),
  entityKey: async (_q, _t, _b, name) => entityKeyOf(name),
  openEntityNames: async (_q, _t, _b, rows) => rows.map((r) => r.name ?? undefined),
};

/** Postgres's lexemes of the words queries used (the english configuration is the same for every database). */
const plaintextLexemes = new LexemeCache();
