import type { Embedder } from './embedder.js';
import { estimateModelTokens, groupByLength, paddedTokens } from './length-groups.js';

interface Pending {
  text: string;
  /** Counted when the text first enters the grouping window. */
  tokens?: number;
  resolve: (v: Float32Array) => void;
  reject: (e: unknown) => void;
}

export interface BatchObserver {
  /** `tokens`: each text's token length as the batcher counted it (the model pads every text to the longest). */
  (batchSize: number, seconds: number, tokens: readonly number[]): void;
}

/** What a text is embedded as: a recall query or a stored document. */
export type EmbeddingKind = 'query' | 'document';

/** Padded tokens (texts times the longest text's tokens) one batch may hold, per kind of text. */
export type BatchTokenCaps = Readonly<Record<EmbeddingKind, number>>;

/**
 * Padded tokens per batch the engine's batcher sends at most. The local model's CPU per text follows the padded tokens
 * more than the batch size (docs/benchmarks.md, "Retain on real text against the model alone"). So documents get a
 * small cap: the one or two retain requests waiting at a time are cut into tight length groups, and padding falls from
 * about a sixth of the model's work to a few percent, while groups of two or three texts cost the model a little more
 * per text than large ones. Queries are short and alike in length, so they pad little whatever the cap; theirs stays
 * large so that a burst of recalls shares few batches.
 */
export const BATCH_TOKENS: BatchTokenCaps = { query: 512, document: 128 };

/**
 * How many of the oldest waiting texts are grouped at once. Texts are counted only when they enter this window, so a
 * bulk retain that queues thousands of chunks costs the main thread a bounded amount of counting and sorting per batch,
 * never all of it at once.
 */
const GROUPING_WINDOW = 128;

/**
 * Most milliseconds one batch spends counting texts that enter the window. Counting ordinary prose takes microseconds
 * per text, but text of made-up words takes a millisecond or more per chunk, and a full window of it would hold the
 * event loop; texts not reached are counted for a later batch.
 */
const COUNTING_BUDGET_MS = 4;

/**
 * How a batch waits for company while the model is busy: at most `ms` milliseconds, timed by `schedule` (which returns
 * a function that cancels the wait). Injectable so that tests decide when a wait ends instead of racing a clock.
 */
export interface BatchHold {
  ms: number;
  schedule: (run: () => void, ms: number) => () => void;
}

const timerSchedule: BatchHold['schedule'] = (run, ms) => {
  const timer = setTimeout(run, ms);
  return () => clearTimeout(timer);
};

/**
 * The longest a batch waits for company while another batch is at the model. Of the order of one lone query's time at
 * the model, so the held batch still reaches the model's thread before that thread runs dry; a lone query costs the
 * model about twice the CPU of one in a batch of four (docs/benchmarks.md, the model's cost by batch size).
 */
export const BATCH_HOLD_MS = 4;

const DEFAULT_HOLD: BatchHold = { ms: BATCH_HOLD_MS, schedule: timerSchedule };

/**
 * Lets concurrent requests share inference batches. While `maxInFlight` batches run, new texts queue; when one
 * finishes, the next batch goes out. An idle engine embeds a lone query at once, with no added delay; a busy one
 * approaches the model's batch throughput.
 *
 * A batch is capped by padded tokens, not by count, because padding is most of a model's cost on texts of mixed
 * length: the waiting texts are grouped by token length (length-groups.ts), and the group that holds the oldest
 * waiting text leaves next, so no text waits behind later ones for ever. Each caller gets its own vectors in the
 * order of its texts, whatever batches they travelled in.
 *
 * With the model on its own thread, two batches in flight keep that thread working while the main thread is busy: with
 * one, the next batch could leave only after the main thread had taken the previous answer, so a busy main thread left
 * the model idle and queries waited.
 */
export class MicroBatcher implements Embedder {
  private readonly queues: Record<EmbeddingKind, Pending[]> = { query: [], document: [] };
  private inFlight = 0;
  /** Cancels the end of the current hold, while the next batch is held. */
  private cancelHold: (() => void) | undefined;
  /** The current hold has run its time: the next batch leaves as soon as a slot is free. */
  private holdOver = false;

  constructor(
    private readonly inner: Embedder,
    private readonly maxTokens: BatchTokenCaps = BATCH_TOKENS,
    private readonly observe: BatchObserver = () => undefined,
    private readonly maxInFlight = 1,
    private readonly tokenLength: (text: string) => number = estimateModelTokens,
    private readonly hold: BatchHold = DEFAULT_HOLD,
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

  embed(texts: readonly string[], kind: EmbeddingKind): Promise<Float32Array[]> {
    const promises = texts.map(
      (text) => new Promise<Float32Array>((resolve, reject) => this.queues[kind].push({ text, resolve, reject })),
    );
    this.pump();
    return Promise.all(promises);
  }

  private pump(): void {
    while (this.inFlight < this.maxInFlight) {
      // Queries first: they are on a user's critical path, documents are usually part of a bulk retain.
      const kind = this.queues.query.length > 0 ? 'query' : 'document';
      const queue = this.queues[kind];
      if (queue.length === 0) return;
      if (this.holding(queue, kind)) return;
      this.endHold();
      this.send(takeNextBatch(queue, this.maxTokens[kind], this.tokenLength), kind);
    }
  }

  /**
   * Whether the next batch waits for company: only while another batch is at the model (an idle model embeds at once)
   * and the waiting texts do not yet fill a batch, and for at most the hold's time since the wait began. When the
   * batch at the model comes back, whatever waits leaves with no further delay.
   */
  private holding(queue: Pending[], kind: EmbeddingKind): boolean {
    if (this.inFlight === 0 || this.hold.ms <= 0 || this.holdOver) return false;
    const window = countedWindow(queue, this.tokenLength);
    if (paddedTokens(window.map((p) => p.tokens!)) >= this.maxTokens[kind]) return false;
    this.cancelHold ??= this.hold.schedule(() => {
      this.cancelHold = undefined;
      this.holdOver = true;
      this.pump();
    }, this.hold.ms);
    return true;
  }

  private endHold(): void {
    this.cancelHold?.();
    this.cancelHold = undefined;
    this.holdOver = false;
  }

  private send(batch: Pending[], kind: EmbeddingKind): void {
    this.inFlight++;
    const started = performance.now();
    this.inner
      .embed(
        batch.map((p) => p.text),
        kind,
      )
      .then(
        (vectors) => {
          this.observe(
            batch.length,
            (performance.now() - started) / 1000,
            batch.map((p) => p.tokens ?? this.tokenLength(p.text)),
          );
          batch.forEach((p, i) => p.resolve(vectors[i]!));
        },
        (error: unknown) => batch.forEach((p) => p.reject(error)),
      )
      .finally(() => {
        this.inFlight--;
        this.pump();
      });
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

/**
 * Removes from `queue` (oldest first) and returns the next batch: the length group of the oldest waiting text among
 * the counted ones of the first GROUPING_WINDOW, shortest text first.
 */
function takeNextBatch(queue: Pending[], maxTokens: number, tokenLength: (text: string) => number): Pending[] {
  const window = countedWindow(queue, tokenLength);
  const groups = groupByLength(
    window.map((p) => p.tokens!),
    maxTokens,
  );
  const chosen = groups.find((group) => group.includes(0))!;
  const taken = new Set(chosen);
  const batch = chosen.map((i) => window[i]!);
  const rest = window.filter((_, i) => !taken.has(i));
  queue.splice(0, window.length, ...rest);
  return batch;
}

/**
 * The oldest waiting texts, at most GROUPING_WINDOW, each counted with `tokenLength` once: texts entering the window
 * are counted until COUNTING_BUDGET_MS has passed (the oldest one always), and the window ends at the first text left
 * uncounted.
 */
function countedWindow(queue: Pending[], tokenLength: (text: string) => number): Pending[] {
  const started = performance.now();
  const end = Math.min(queue.length, GROUPING_WINDOW);
  let size = 0;
  for (; size < end; size++) {
    const pending = queue[size]!;
    if (pending.tokens !== undefined) continue;
    if (size > 0 && performance.now() - started > COUNTING_BUDGET_MS) break;
    pending.tokens = tokenLength(pending.text);
  }
  return queue.slice(0, size);
}
