import { problem, type Problem } from '@mnemos/problems';

/** A 4xx answer the input layer produces: a catalogue problem, which each server sends as problem+json. */
export type InputProblem = Problem;

export const tooDeep = (max: number): InputProblem => problem('json_too_deep', 'nested', { max });

export const unsupportedMediaType = (): InputProblem => problem('unsupported_media_type', 'json');

export const methodNotAllowed = (method: string, path: string, allow: string[]): InputProblem =>
  problem('method_not_allowed', 'route', { method, path, allow }, { headers: { allow: allow.join(', ') } });

/** Router failures (bad percent-encoding, over-long parameters) reach `frameworkErrors`, not the error handler. */
export function frameworkProblem(error: { code?: string; message: string; statusCode?: number }): InputProblem {
  if (error.code === 'FST_ERR_BAD_URL') return problem('bad_request', 'badPercentEncoding');
  const clientError = error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500;
  const status = clientError ? error.statusCode! : 400;
  return problem('bad_request', 'invalidUrl', { reason: error.message }, { status });
}

interface AjvIssue {
  keyword?: string;
  message?: string;
  parentSchema?: unknown;
}

/**
 * Ajv's message for a failed check, with integer bounds spelled out: a query value such as `offset=1e20` is told the
 * whole allowed range (Ajv alone says only "must be <= ..." or "must be integer").
 */
export function describeIssue(issue: AjvIssue): string {
  const schema = issue.parentSchema as { type?: unknown; minimum?: unknown; maximum?: unknown } | undefined;
  const boundsKeyword = ['type', 'minimum', 'maximum', 'multipleOf'].includes(issue.keyword ?? '');
  const integer = schema?.type === 'integer';
  if (boundsKeyword && integer && typeof schema.minimum === 'number' && typeof schema.maximum === 'number') {
    return `must be an integer from ${schema.minimum} to ${schema.maximum}`;
  }
  return issue.message ?? 'is invalid';
}
