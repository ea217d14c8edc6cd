// The problem codes each gateway operation can answer, for its OpenAPI entry (`x-problem-codes` and one response per
// status), so a client knows every code to expect.
import { documentProblems, type ProblemCode } from '@mnemos/problems';

/** Any route: the input layer's checks of the request, and the gateway's own failure. */
const EVERY_ROUTE: readonly ProblemCode[] = [
  'validation_failed',
  'malformed_json',
  'json_too_deep',
  'bad_request',
  'payload_too_large',
  'unsupported_media_type',
  'request_timeout',
  'server_busy',
  'internal_error',
];

/**
 * A route opened by a credential: a Bearer key or token with the route's scope and within its bank and space limits,
 * or the console session naming one of its projects (and its CSRF token on changes); counted against the
 * credential's request rate.
 */
export const CREDENTIAL_ROUTE: readonly ProblemCode[] = [
  'unauthorized',
  'insufficient_scope',
  'forbidden',
  'project_required',
  'csrf_failed',
  'not_found',
  'rate_limited',
];

/** A call forwarded to the project's engine: the gateway's answers when the engine fails, and the engine's own. */
export const FORWARDED: readonly ProblemCode[] = [
  'engine_unavailable',
  'engine_timeout',
  'engine_error',
  'warming',
  'stopping',
  'database_unavailable',
];

/** A call counted against a monthly quota (retain, recall, reflect); the quota ledger may be out of reach. */
export const COUNTED: readonly ProblemCode[] = ['quota_exceeded', 'database_unavailable'];

/** What reflect adds: the engine's LLM may be missing, slow or unusable. */
export const REFLECTS: readonly ProblemCode[] = [
  'llm_not_configured',
  'llm_unavailable',
  'llm_timeout',
  'llm_rejected',
  'llm_bad_answer',
];

/** A console account route that needs the session cookie (and, for changes, its CSRF token). */
export const SESSION_ROUTE: readonly ProblemCode[] = ['unauthorized', 'csrf_failed'];

/** An admin route: the admin token, with wrong tokens throttled per address. */
export const ADMIN_ROUTE: readonly ProblemCode[] = ['unauthorized', 'rate_limited'];

/** A route's response schemas with its problems: each status names its codes; `x-problem-codes` lists them all. */
export function answers<A extends Record<number, unknown>>(success: A, codes: readonly ProblemCode[]) {
  const problems = documentProblems([...EVERY_ROUTE, ...codes]);
  return { response: { ...problems.responses, ...success }, 'x-problem-codes': problems.codes };
}
