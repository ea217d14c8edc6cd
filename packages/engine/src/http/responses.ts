import { documentProblems, type ProblemCode } from '@mnemos/problems';
import type { TSchema } from '@sinclair/typebox';
import type { RetainResult } from '../service/types.js';

/** Problems any route may answer: a malformed or unauthorised request, or an unknown tenant. */
const EVERY_ROUTE: readonly ProblemCode[] = [
  'validation_failed',
  'malformed_json',
  'json_too_deep',
  'unauthorized',
  'tenant_not_found',
];

/** A success answer offered in several media types (JSON, or an event stream), each with its schema. */
interface MediaTypedAnswer {
  description: string;
  content: Record<string, { schema: TSchema }>;
}

/**
 * A route's response schemas and the problem codes it can answer: each status documents its codes, and the operation
 * lists them all under `x-problem-codes`, so a client knows every code to expect.
 */
export function answers<A extends Record<number, TSchema | MediaTypedAnswer>>(
  success: A,
  codes: readonly ProblemCode[] = [],
) {
  const problems = documentProblems([...EVERY_ROUTE, ...codes]);
  return { response: { ...problems.responses, ...success }, 'x-problem-codes': problems.codes };
}

/**
 * Route option for the recall routes: answers are written with JSON.stringify instead of the schema-compiled
 * serializer. A recall answers up to 100 results with exactly the schema's fields, so the compiled serializer's field
 * filtering adds nothing and costs time on large answers. The response schema still documents the answer.
 */
export const plainJsonAnswers = { serializerCompiler: () => (data: unknown) => JSON.stringify(data) } as const;

/**
 * Headers of a retain's answer: an async retain accepted under a bound (X-Mnemos-Max-New-Memories) names the most new
 * memories its job stores, so a quota-holding gateway counts those instead of its own estimate.
 */
export function retainHeaders(result: RetainResult): Record<string, string> {
  return result.async && result.mostNew !== undefined ? { 'x-mnemos-would-store': String(result.mostNew) } : {};
}
