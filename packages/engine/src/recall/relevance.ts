import { round6 } from './candidate.js';

/**
 * Relevance: the chance, from 0 to 1, that a recall result is one a person would count as answering the query.
 *
 * A logistic over the result's ranking score and its cosine similarity to the query, fitted on LoCoMo's evidence
 * labels (a result is relevant when it is one of the turns a question cites as its evidence) over the top 20 results
 * of every question of conv-26, conv-30 and conv-41, and checked on conv-42 and conv-43 (docs/api.md, "Relevance").
 * The ranking score carries nearly all of it; the cosine, already part of the score, adds a small correction.
 *
 * Produced by `node --conditions=source --import tsx scripts/fit-relevance.mjs`, which prints this object.
 */
export const RELEVANCE_MODEL: RelevanceModel = {
  intercept: -10.2988,
  score: 3.4411,
  semantic: -0.475,
};

/** The logistic's coefficients: `relevance = 1 / (1 + exp(-(intercept + score * s + semantic * cosine)))`. */
export interface RelevanceModel {
  intercept: number;
  score: number;
  semantic: number;
}

/** The calibrated figure for one result, before the list caps it (see RelevanceCap). */
export function relevanceOf(score: number, cosine: number, model: RelevanceModel = RELEVANCE_MODEL): number {
  const z = model.intercept + model.score * score + model.semantic * cosine;
  return 1 / (1 + Math.exp(-z));
}

/**
 * Keeps relevance from rising down a result list: a result never shows more relevance than the one ranked above it,
 * so a threshold always cuts the list at one place.
 */
export class RelevanceCap {
  private cap = 1;

  constructor(private readonly model: RelevanceModel = RELEVANCE_MODEL) {}

  next(score: number, cosine: number): number {
    this.cap = Math.min(this.cap, round6(relevanceOf(score, cosine, this.model)));
    return this.cap;
  }
}
