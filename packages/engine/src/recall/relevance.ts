import { round6 } from './candidate.js';

/**
 * Relevance: the chance, from 0 to 1, that a recall result is one a person would count as answering the query.
 *
 * A logistic over two signals that mean the same in any bank: the result's cosine similarity to the query and the
 * share of the query's keyword-index terms it holds (candidate.ts, `coverage`), with a squared cosine and their product
 * so the figure can rise steeply where both are high (a close paraphrase holding the query's words is nearly always
 * the answer) while staying low for the middling cosines that memories about the same person share. The ranking score is left out on
 * purpose: its keyword part is divided by the best match of the query and its neighbour and document parts depend on
 * the other memories, so the same memory and question would score differently in a bank of 1 memory and of 50.
 * Ranking is not touched: relevance only labels the ranked list and cuts it at `min_relevance`.
 *
 * Fitted on LoCoMo's evidence labels and on small banks of agent-style facts (packages/engine/bench/agent-facts.json)
 * and checked on held-out parts of both (docs/api.md, "Relevance"). Produced by
 * `node --conditions=source --import tsx scripts/fit-relevance.mjs`, which prints this object.
 */
export const RELEVANCE_MODEL: RelevanceModel = {
  intercept: -5.9736,
  semantic: 1.4083,
  coverage: 2.8175,
  semanticSquared: 1.7484,
  semanticCoverage: 1.9876,
};

/**
 * The logistic's coefficients: `relevance = 1 / (1 + exp(-z))` with `z = intercept + semantic * c + coverage * k +
 * semanticSquared * c^2 + semanticCoverage * c * k`, for the cosine `c` and the coverage `k`.
 */
export interface RelevanceModel {
  intercept: number;
  semantic: number;
  coverage: number;
  semanticSquared: number;
  semanticCoverage: number;
}

/** The features the coefficients weigh, in the order of RelevanceModel's non-intercept fields. */
export function relevanceFeatures(cosine: number, coverage: number): [number, number, number, number] {
  return [cosine, coverage, cosine * cosine, cosine * coverage];
}

/** The calibrated figure for one result, before the list caps it (see RelevanceCap). */
export function relevanceOf(cosine: number, coverage: number, model: RelevanceModel = RELEVANCE_MODEL): number {
  const [c, k, c2, ck] = relevanceFeatures(cosine, coverage);
  const z =
    model.intercept +
    model.semantic * c +
    model.coverage * k +
    model.semanticSquared * c2 +
    model.semanticCoverage * ck;
  return 1 / (1 + Math.exp(-z));
}

/**
 * Keeps relevance from rising down a result list: a result never shows more relevance than the one ranked above it,
 * so a threshold always cuts the list at one place.
 */
export class RelevanceCap {
  private cap = 1;

  constructor(private readonly model: RelevanceModel = RELEVANCE_MODEL) {}

  next(cosine: number, coverage: number): number {
    this.cap = Math.min(this.cap, round6(relevanceOf(cosine, coverage, this.model)));
    return this.cap;
  }
}
