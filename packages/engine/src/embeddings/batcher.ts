import type { Embedder } from './embedder.js';

interface Pending {
  text: string;
  resolve: (v: Float32Array) => void;
  reject: (e: unknown) => void;
}

export interface BatchObserver {
  (batchSize: number, seconds: number): void;
}

/**
 * Lets concurrent requests share inference batches. While one batch runs, new texts queue; when it finishes, the
 * queue goes out as the next batch (up to `maxBatch`). An idle engine embeds a lone query at once, with no added
 * delay; a busy one approaches the model's batch throughput.
 */
export class MicroBatcher implements Embedder {
  private readonly queues: Record<'query' | 'document', Pending[]> = { query: [], document: [] };
  private running = false;

  constructor(
    private readonly inner: Embedder,
    private readonly maxBatch = 32,
    private readonly observe: BatchObserver = () => undefined,
  ) {}

  get id(): string {
    return this.inner.id;
  }

  get dimension(): number {
    return this.inner.dimension;
  }

  get queueDepth(): number {
    return this.queues.query.length + this.queues.document.length;
  }

  embed(texts: readonly string[], kind: 'query' | 'document'): Promise<Float32Array[]> {
    const promises = texts.map(
      (text) => new Promise<Float32Array>((resolve, reject) => this.queues[kind].push({ text, resolve, reject })),
    );
    this.pump();
    return Promise.all(promises);
  }

  private pump(): void {
    if (this.running) return;
    // Queries first: they are on a user's critical path, documents are usually part of a bulk retain.
    const kind = this.queues.query.length > 0 ? 'query' : 'document';
    const queue = this.queues[kind];
    if (queue.length === 0) return;
    const batch = queue.splice(0, this.maxBatch);
    this.running = true;
    const started = performance.now();
    this.inner
      .embed(
        batch.map((p) => p.text),
        kind,
      )
      .then(
        (vectors) => {
          this.observe(batch.length, (performance.now() - started) / 1000);
          batch.forEach((p, i) => p.resolve(vectors[i]!));
        },
        (error: unknown) => batch.forEach((p) => p.reject(error)),
      )
      .finally(() => {
        this.running = false;
        this.pump();
      });
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
