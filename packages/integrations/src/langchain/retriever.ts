import { BaseRetriever, type BaseRetrieverInput } from '@langchain/core/retrievers';
import { Document } from '@langchain/core/documents';
import type { RecallHit } from '@mnemos/client';
import { checkScope, type MemoryScope, type RecallSettings } from '../shared/scope.js';

export interface MnemosRetrieverInput extends BaseRetrieverInput, MemoryScope {
  /** Settings of each search (for example `max_tokens`, `budget`, `types`, `tags`). */
  recall?: RecallSettings | undefined;
}

/** What a retrieved memory carries besides its text. */
export interface MemoryDocumentMetadata {
  id: string;
  type: string;
  score: number;
  /** The chance, 0 to 1, that the memory answers the query (absent from an engine that does not give it). */
  relevance?: number;
  occurred_at: string | null;
  tags: string[];
  bank_id: string;
  space: string;
  [key: string]: unknown;
}

export function memoryDocument(hit: RecallHit): Document<MemoryDocumentMetadata> {
  const metadata: MemoryDocumentMetadata = {
    id: hit.id,
    type: hit.type,
    score: hit.score,
    occurred_at: hit.occurred_at,
    tags: hit.tags,
    bank_id: hit.bank_id,
    space: hit.space,
  };
  if (hit.relevance !== undefined) metadata.relevance = hit.relevance;
  return new Document({ id: hit.id, pageContent: hit.text, metadata });
}

/**
 * A LangChain retriever over one Mnemos bank: `invoke(query)` recalls (semantic, keyword and time-aware search) and
 * answers the memories as Documents, best first.
 *
 * ```ts
 * const retriever = new MnemosRetriever({ client, bankId: 'alice' });
 * const docs = await retriever.invoke('What does Alice drink?');
 * ```
 */
export class MnemosRetriever extends BaseRetriever<MemoryDocumentMetadata> {
  lc_namespace = ['mnemos', 'retrievers'];
  private readonly scope: MemoryScope;
  private readonly settings: RecallSettings | undefined;

  constructor(fields: MnemosRetrieverInput) {
    checkScope(fields, 'MnemosRetriever');
    const { client, bankId, space, recall, ...base } = fields;
    super(base);
    this.scope = { client, bankId, space };
    this.settings = recall;
  }

  override async _getRelevantDocuments(query: string): Promise<Document<MemoryDocumentMetadata>[]> {
    const { client, bankId, space } = this.scope;
    const answer = await client.recall(bankId, query, { ...this.settings, space });
    return answer.results.map(memoryDocument);
  }
}
