import { countTokens } from '../util/tokens.js';
import { NEAR_COPY_FACTOR, SUPERSEDED_FACTOR, WEIGHTS, type Candidate } from './candidate.js';
import { feedbackScores, type FeedbackCorpus } from './feedback.js';
import { NearCopyIndex, wordSignature } from './near-copy.js';
import { RelevanceCap } from './relevance.js';
import { truncateToTokens } from './truncate.js';

/** The ordering step's answer: the candidates taken, best first, within the budgets. */
export interface Ordered {
  taken: Candidate[];
  /** Each taken candidate's relevance (relevance.ts), never rising down the list. */
  relevance: number[];
  /** The first candidate's text cut to the token budget, when it alone is larger than the budget. */
  truncatedText: string | undefined;
  tokens: number;
  /** Candidates looked at before the budget was full. */
  considered: number;
}

/**
 * Orders the scored candidates and cuts the list: pseudo-relevance feedback adds its signal from the first-pass
 * ranking, superseded facts are demoted, the list is sorted (once), near-copies of a better candidate wait until
 * every distinct candidate is in, and the list stops at `limit` results, `maxTokens` tokens or the first result less
 * relevant than `minRelevance`.
 */
export function order(
  candidates: Candidate[],
  corpus: FeedbackCorpus,
  limit: number,
  maxTokens: number,
  minRelevance = 0,
  /** False for a recall `as_of` an instant: its memories were all current then, whatever replaced them later. */
  demoteSuperseded = true,
  /** Reorders the sorted candidates before the cut (recency.ts), when given. */
  arrange?: (ranked: Candidate[]) => void,
): Ordered {
  fuse(candidates, corpus);
  for (const c of candidates) {
    if (demoteSuperseded && c.meta.memory.supersededBy) {
      c.score *= SUPERSEDED_FACTOR;
      c.superseded = true;
    }
  }
  // Ties keep the order of the ranking before demotion, and of the first pass before that.
  candidates.sort((a, b) => b.score - a.score || b.fused - a.fused || b.firstPass - a.firstPass || a.rank - b.rank);
  arrange?.(candidates);
  return cut(candidates, { limit, maxTokens, minRelevance });
}

/** Adds the feedback signal (learned from the first pass) to every candidate's score. */
function fuse(candidates: Candidate[], corpus: FeedbackCorpus): void {
  const feedback = feedbackScores(
    candidates.map((c) => ({ doc: c.keywords, score: c.firstPass })),
    corpus,
  );
  candidates.forEach((c, i) => {
    const f = feedback[i] ?? 0;
    c.signals.feedback = f;
    // The last term of the weighted sum (candidate.ts SIGNALS order).
    c.fused = c.firstPass + WEIGHTS.feedback * f;
    c.score = c.fused;
  });
}

/**
 * Diversity and budgets: a near-copy of a better candidate (same words, give or take punctuation and a few) waits
 * until every distinct candidate is in, with its score lowered, so copies never crowd the top. Candidates are taken
 * until `limit` results, `maxTokens` tokens, or a relevance below `minRelevance`. When the best candidate alone is
 * larger than `maxTokens`, it is taken cut to the budget: a match is never answered with nothing.
 */
function cut(
  ranked: readonly Candidate[],
  { limit, maxTokens, minRelevance }: { limit: number; maxTokens: number; minRelevance: number },
): Ordered {
  const copies: Candidate[] = [];
  const kept = new NearCopyIndex();
  const taken: Candidate[] = [];
  const relevance: number[] = [];
  const cap = new RelevanceCap();
  let truncatedText: string | undefined;
  let tokens = 0;
  let considered = 0;
  const take = (c: Candidate): boolean => {
    if (taken.length >= limit) return false;
    const shown = cap.next(c.cosine, c.coverage);
    if (shown < minRelevance) return false;
    const cost = c.meta.tokenCount || countTokens(c.meta.memory.text);
    if (tokens + cost > maxTokens) {
      if (taken.length > 0) return false;
      truncatedText = truncateToTokens(c.meta.memory.text, maxTokens);
      if (truncatedText === '') return false;
      tokens = countTokens(truncatedText);
      relevance.push(shown);
      taken.push(c);
      return false;
    }
    tokens += cost;
    relevance.push(shown);
    taken.push(c);
    return true;
  };
  let full = false;
  for (const c of ranked) {
    considered++;
    // The signature is kept with the row: the next recall that meets this memory reuses it.
    if (!kept.admit((c.meta.nearCopySignature ??= wordSignature(c.meta.memory.text)))) {
      c.score *= NEAR_COPY_FACTOR;
      c.nearCopy = true;
      copies.push(c);
      continue;
    }
    if (!take(c)) {
      full = true;
      break;
    }
  }
  if (!full) for (const c of copies) if (!take(c)) break;
  return { taken, relevance, truncatedText, tokens, considered };
}
