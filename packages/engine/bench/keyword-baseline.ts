import type { Engine } from '../src/engine.js';
import { parseTsvector } from '../src/keywords/tsvector.js';
import { bm25Scores } from '../src/keywords/bm25.js';

interface KeywordDoc {
  tf: Map<string, number>;
  length: number;
  diaId: string;
}

/**
 * BM25 alone, the baseline of `npm run bench:locomo -- --arms keyword`: the engine's own keyword arm without the
 * other arms, the signals or the fusion. The bank's memories are read with the index terms the engine stored for them
 * (english lexemes), the query's terms come from the engine's codec as recall gets them, and the memories holding at
 * least one of them are ranked by the engine's BM25 (its k1 and b, the average length over the rows scored, as the
 * keyword arm does).
 */
export class KeywordBaseline {
  private readonly banks = new Map<string, { docs: KeywordDoc[]; df: Map<string, number> }>();

  constructor(private readonly engine: Engine) {}

  /** The bank's `metadata.dia_id`s, best BM25 first. */
  async rank(tenant: string, bankId: string, query: string): Promise<string[]> {
    const bank = this.banks.get(bankId) ?? (await this.load(tenant, bankId));
    const terms = await this.engine.codec.indexTerms(this.engine.db, tenant, [bankId], query);
    const matching = bank.docs.filter((d) => terms.some((t) => d.tf.has(t)));
    const scores = bm25Scores(matching, terms, bank.df, bank.docs.length);
    return matching
      .map((d, i) => ({ diaId: d.diaId, score: scores[i]! }))
      .sort((a, b) => b.score - a.score)
      .map((d) => d.diaId);
  }

  private async load(tenant: string, bankId: string) {
    const rows = await this.engine.db.query<{ fts: string | null; dia_id: string | null }>(
      `SELECT fts::text AS fts, metadata->>'dia_id' AS dia_id FROM memories WHERE tenant = $1 AND bank_id = $2`,
      [tenant, bankId],
    );
    const docs = rows.map((r) => {
      const { terms, length } = parseTsvector(r.fts ?? '');
      return { tf: terms, length, diaId: r.dia_id ?? '' };
    });
    const df = new Map<string, number>();
    for (const d of docs) for (const t of d.tf.keys()) df.set(t, (df.get(t) ?? 0) + 1);
    const bank = { docs, df };
    this.banks.set(bankId, bank);
    return bank;
  }
}
