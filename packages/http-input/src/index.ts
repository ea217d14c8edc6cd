export { exceedsJsonDepth, MAX_JSON_DEPTH } from './json-depth.js';
export { findUnstorableText, isStorableText, pointerSegment, type UnstorableText } from './text.js';
export { frameworkProblem, type InputProblem } from './problems.js';
export { installInputLayer, METHODS_WITHOUT_BODY, type InputLayer, type InputLayerOptions } from './fastify.js';
export { inputErrorProblem, type RequestPart } from './request-errors.js';

/**
 * The largest list offset either server accepts. Offsets past the last item answer an empty page; the bound keeps every
 * accepted value an exact integer that PostgreSQL's bigint holds (1e20 or 2^63 are a 400, not a database error).
 */
export const MAX_LIST_OFFSET = 1_000_000_000;
export {
  BodyBudget,
  budgetOf,
  clientErrorAnswer,
  serverLimits,
  type BodyBudgetLimits,
  type BodyBudgetRefusal,
  type ServerHttpLimits,
} from './body-budget.js';
export { closeAfterRefusal } from './early-refusal.js';
export {
  announcer,
  createLogger,
  LOG_FORMATS,
  LOG_LEVELS,
  type LogFormat,
  type LogLevel,
  type ServerLogger,
} from './logger.js';
