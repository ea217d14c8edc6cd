/** A 4xx answer the input layer produces; each server turns it into its own problem+json error. */
export interface InputProblem {
  status: number;
  code: string;
  detail: string;
  errors?: Array<{ pointer: string; detail: string }>;
  headers?: Record<string, string>;
}

export const tooDeep = (max: number): InputProblem => ({
  status: 400,
  code: 'json_too_deep',
  detail: `The request body nests objects or arrays more than ${max} levels deep; flatten it and send it again.`,
});

export const unsupportedMediaType = (): InputProblem => ({
  status: 415,
  code: 'unsupported_media_type',
  detail: 'Send the body as JSON with Content-Type: application/json.',
});

export const methodNotAllowed = (method: string, path: string, allow: string[]): InputProblem => ({
  status: 405,
  code: 'method_not_allowed',
  detail: `${path} does not answer ${method}; use ${allow.join(', ')}.`,
  headers: { allow: allow.join(', ') },
});

/** Router failures (bad percent-encoding, over-long parameters) reach `frameworkErrors`, not the error handler. */
export function frameworkProblem(error: { code?: string; message: string; statusCode?: number }): InputProblem {
  if (error.code === 'FST_ERR_BAD_URL') {
    return {
      status: 400,
      code: 'bad_request',
      detail: 'The request URL has a malformed percent-encoding (% must be followed by two hex digits); fix it.',
    };
  }
  const clientError = error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500;
  const status = clientError ? error.statusCode! : 400;
  return { status, code: 'bad_request', detail: `The request URL is invalid: ${error.message}` };
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
