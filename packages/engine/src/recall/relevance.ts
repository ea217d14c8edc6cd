/**
 * Relevance: the chance, from 0 to 1, that a recall result is one a person would count as answering the query.
 *
 * A logistic over the result's ranking score and its cosine similarity to the query, fitted on LoCoMo's evidence
 * labels (a result is relevant when it is one of the turns a question cites as its evidence). The coefficients come
 * from `npx tsx scripts/fit-relevance.ts` (docs/api.md, "Relevance"), which prints this object.
 */
export const RELEVANCE_MODEL = {
  intercept: -6.0,
  score: 2.0,
  semantic: 2.0,
} as const;

/** The calibrated figure for one result, before the list caps it (see RelevanceCap). */
export function relevanceOf(score: number, cosine: number): number {
  const z = RELEVANCE_MODEL.intercept + RELEVANCE_MODEL.score * score + RELEVANCE_MODEL.semantic * cosine;
  return 1 / (1 + Math.exp(-z));
}

/**
 * Keeps relevance from rising down a result list: a result never shows more relevance than the one ranked above it,
 * so a threshold always cuts the list at one place.
 */
export class RelevanceCap {
  private cap = 1;

  next(score: number, cosine: number): number {
    this.cap = Math.min(this.cap, round4(relevanceOf(score, cosine)));
    return this.cap;
  }
}

function round4(n: number): number {
  return Math.round(n * 1e4) / 1e4;
}
