import { statusOf, type ProblemCode } from './catalogue.js';

/**
 * The OpenAPI response of one status's problems: the shared schema under the media type the servers send
 * (application/problem+json), and the codes it carries.
 */
export interface ProblemResponse {
  description: string;
  content: { 'application/problem+json': { schema: { $ref: string } } };
}

export interface DocumentedProblems {
  /** One response per status, its description naming the codes that status carries. */
  responses: Record<number, ProblemResponse>;
  /** Every code, once, in the order given: the operation's `x-problem-codes`. */
  codes: ProblemCode[];
}

/**
 * How an operation documents the problems it can answer, so a client knows every code to expect. `schemaRef` is the
 * id under which the server registered its problem+json schema.
 */
export function documentProblems(codes: readonly ProblemCode[], schemaRef = 'Problem#'): DocumentedProblems {
  const unique = [...new Set(codes)];
  const byStatus = new Map<number, ProblemCode[]>();
  for (const code of unique) byStatus.set(statusOf(code), [...(byStatus.get(statusOf(code)) ?? []), code]);
  const responses: Record<number, ProblemResponse> = {};
  for (const [status, list] of byStatus)
    responses[status] = {
      description: `Problem: ${list.join(', ')}`,
      content: { 'application/problem+json': { schema: { $ref: schemaRef } } },
    };
  return { responses, codes: unique };
}
