import { readdirSync } from 'node:fs';
import path from 'node:path';
import { normalize, type Embedder } from '../src/embeddings/embedder.js';
import { estimateModelTokens, groupByLength } from '../src/embeddings/length-groups.js';
import { loadConversation, type Conversation } from './locomo.js';
import { testLocomoDir } from './test-assets.js';

/**
 * Real text for the benchmarks: LoCoMo's conversation turns as memories and its questions as queries, read from the
 * data set folder the tests use (MNEMOS_TEST_LOCOMO).
 */
export interface LocomoText {
  /** Every turn ("Speaker: text [shares <caption>]"), conversation by conversation, in order. */
  turns: string[];
  /** Every scored question. */
  questions: string[];
}

export function loadLocomoText(dir: string = testLocomoDir()): LocomoText {
  const files = readdirSync(dir)
    .filter((f) => /^conv-.*\.json$/.test(f))
    .sort();
  if (files.length === 0) throw new Error(`no LoCoMo conversations (conv-*.json) in ${dir}; set MNEMOS_TEST_LOCOMO`);
  const conversations: Conversation[] = files.map((f) => loadConversation(path.join(dir, f)));
  return {
    turns: conversations.flatMap((c) => c.sessions.flatMap((s) => s.turns.map((t) => t.content))),
    questions: conversations.flatMap((c) => c.questions.map((q) => q.question)),
  };
}

/** A stride that walks the turns in a different order each round (any number sharing no factor with the count). */
const ROUND_STRIDE = 389;

/**
 * The k-th of as many distinct memories as a bank needs, all real LoCoMo language: the turns as they are, then, round
 * after round, each turn followed by the first sentence of another turn (a different one each round). Later rounds are
 * a sentence longer than the turns, as a memory that joins two remarks would be.
 */
export function derivedMemory(turns: readonly string[], k: number): string {
  const parts = derivedParts(turns.length, k);
  const turn = turns[parts.turn]!;
  if (parts.other === undefined) return turn;
  const other = turns[parts.other]!;
  const sentence = /^[^:]*:\s*(.*?[.!?])(\s|$)/.exec(other)?.[1] ?? other.slice(other.indexOf(':') + 1).trim();
  return `${turn} ${sentence}`;
}

/** Which turns the k-th derived memory is made of: its turn, and the turn whose first sentence follows it (if any). */
export function derivedParts(turnCount: number, k: number): { turn: number; other: number | undefined } {
  const round = Math.floor(k / turnCount);
  return { turn: k % turnCount, other: round === 0 ? undefined : (k * ROUND_STRIDE + round) % turnCount };
}

/**
 * A stand-in vector for the k-th derived memory, made from its turns' vectors (embedding a million texts takes hours):
 * the normalised sum of its turn's vector and half its other turn's vector; a plain turn keeps its own vector.
 */
export function derivedVector(turnVectors: readonly Float32Array[], k: number): Float32Array {
  const parts = derivedParts(turnVectors.length, k);
  const out = Float32Array.from(turnVectors[parts.turn]!);
  if (parts.other !== undefined) {
    const other = turnVectors[parts.other]!;
    for (let i = 0; i < out.length; i++) out[i] = out[i]! + 0.5 * other[i]!;
  }
  return normalize(out);
}

/** One pass of `model` over `texts` in `batches` (lists of indices): wall seconds and this process's CPU milliseconds. */
export async function embedPass(
  model: Embedder,
  texts: readonly string[],
  batches: readonly number[][],
): Promise<{ seconds: number; cpuMs: number }> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (const batch of batches)
    await model.embed(
      batch.map((i) => texts[i]!),
      'document',
    );
  const used = process.cpuUsage(cpu);
  return { seconds: (performance.now() - started) / 1000, cpuMs: (used.user + used.system) / 1000 };
}

/** Texts per second the model embeds `texts` at, in the given batches (one pass; lists of indices into `texts`). */
export async function embedRate(
  model: Embedder,
  texts: readonly string[],
  batches: readonly number[][],
): Promise<number> {
  return texts.length / (await embedPass(model, texts, batches)).seconds;
}

/** Batches of `size` texts in the given order. */
export function batchesInOrder(count: number, size: number): number[][] {
  const out: number[][] = [];
  for (let i = 0; i < count; i += size) out.push(Array.from({ length: Math.min(size, count - i) }, (_, j) => i + j));
  return out;
}

/** Batches of similar length, capped by padded tokens (what the engine's batcher sends when it has all the texts). */
export function batchesByLength(texts: readonly string[], maxTokens: number): number[][] {
  return groupByLength(texts.map(estimateModelTokens), maxTokens);
}

/** Padded-token caps the model's best batching is searched over. */
export const TOKEN_CAPS = [128, 256, 512, 1024, 2048] as const;

/**
 * The model alone in its best batching on `texts`: sorted by length and cut at each cap of TOKEN_CAPS (after one
 * warm-up pass, since ONNX Runtime sizes its buffers for each new shape); the fastest cap and its rate.
 */
export async function bestModelRate(model: Embedder, texts: readonly string[]): Promise<{ cap: number; rate: number }> {
  await embedRate(model, texts.slice(0, 256), batchesByLength(texts.slice(0, 256), 512));
  let best = { cap: 0, rate: 0 };
  for (const cap of TOKEN_CAPS) {
    const rate = await embedRate(model, texts, batchesByLength(texts, cap));
    if (rate > best.rate) best = { cap, rate };
  }
  return best;
}
