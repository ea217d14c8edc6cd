import { request } from 'node:http';

/** The engine's embedding batches so far, from its Prometheus /metrics: how many model calls, how many texts. */
export interface EmbeddingBatches {
  calls: number;
  texts: number;
}

/** Reads the batch-size histogram's count and sum from `GET {url}/metrics`. */
export function embeddingBatches(url: string): Promise<EmbeddingBatches> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/metrics`, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('error', reject);
      res.on('end', () => {
        const read = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
        resolve({ calls: read('mnemos_embedding_batch_size_count'), texts: read('mnemos_embedding_batch_size_sum') });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** Texts per model call between two readings. */
export function textsPerCall(before: EmbeddingBatches, after: EmbeddingBatches): number {
  return (after.texts - before.texts) / Math.max(1, after.calls - before.calls);
}

/** Recalls by tier so far, from the engine's `mnemos_recall_tier_total` counter in its /metrics text. */
export function recallTiers(metrics: string): Record<string, number> {
  const tiers: Record<string, number> = {};
  for (const m of metrics.matchAll(/^mnemos_recall_tier_total\{tier="([a-z]+)"\} (\d+)$/gm))
    tiers[m[1]!] = Number(m[2]);
  return tiers;
}
