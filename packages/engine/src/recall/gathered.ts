import type { Ranked } from './arms.js';
import type { Candidate, PoolMember } from './candidate.js';
import type { FeedbackCorpus } from './feedback.js';

/** What a tier's arms found for a recall: ranking (signals.ts, order.ts) is the same whichever tier found it. */
export interface Gathered {
  semantic: Ranked[];
  keyword: Ranked[];
  temporal: Ranked[];
  /** Every hit and the neighbours of the best, in that order, with their cosines and keyword-index terms. */
  pool: PoolMember[];
  /** The searched banks as feedback measures them. */
  corpus: FeedbackCorpus;
  /** Reads what the corpus will be asked about the scored candidates, when it does not hold it already. */
  prepareFeedback?: (scored: readonly Candidate[]) => Promise<void>;
  /** The embeddings of some pooled memories (recency.ts), when the tier can give them. */
  vectors?: (ids: readonly string[]) => Promise<ReadonlyMap<string, Float32Array>>;
}

/** Names the end of a stage of the recall in its trace, with the candidates it found. */
export type StageMark = (name: string, candidates?: number) => void;
