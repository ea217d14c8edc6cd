import { Problem, problem } from '@mnemos/problems';
import { describeIssue } from './problems.js';
import { foldUnionIssues } from './union-issues.js';

/** The part of a request a JSON pointer points into. */
export type RequestPart = 'params' | 'querystring' | 'body';

/**
 * The JSON pointer of a field in one part of a request: bare into the body (`/tags/0`, as RFC 9457's examples point
 * into the document sent), prefixed by the part elsewhere (`/querystring/limit`, `/params/bank`). The whole body is `/`.
 */
export function pointerInto(part: RequestPart, path: string): string {
  return `${part === 'body' ? '' : `/${part}`}${path === '/' ? '' : path}` || '/';
}

interface AjvIssue {
  instancePath: string;
  message?: string;
  keyword: string;
  params: Record<string, unknown>;
  parentSchema?: unknown;
}

interface FrameworkError extends Error {
  code?: string;
  statusCode?: number;
  validation?: AjvIssue[];
  validationContext?: string;
}

const JSON_FAILURES = new Set(['FST_ERR_CTP_INVALID_JSON_BODY', 'FST_ERR_CTP_INVALID_CONTENT_LENGTH']);

function validationProblem(issues: AjvIssue[], where: RequestPart): Problem {
  const errors = foldUnionIssues(issues).map((issue) => {
    const missing = issue.keyword === 'required' ? issue.params['missingProperty'] : undefined;
    const path = `${issue.instancePath}${typeof missing === 'string' ? `/${missing}` : ''}`;
    return { pointer: pointerInto(where, path), detail: issue.detail ?? describeIssue(issue) };
  });
  const first = errors[0] ?? { pointer: '/', detail: 'is invalid' };
  return problem('validation_failed', 'schema', { where, pointer: first.pointer, issue: first.detail }, { errors });
}

/**
 * The problem for an error raised while a request's input was read or checked (a catalogue problem, schema
 * validation, body parsing, size, media type, any other 4xx of the framework), the same on both servers;
 * undefined for any other error, which the server maps itself. `tooLarge` is the server's own 413 (each names its
 * own limit setting).
 */
export function inputErrorProblem(error: Error, tooLarge: () => Problem): Problem | undefined {
  if (error instanceof Problem) return error;
  const fe = error as FrameworkError;
  if (fe.validation !== undefined) {
    return validationProblem(fe.validation, (fe.validationContext ?? 'body') as RequestPart);
  }
  if (fe.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || fe.statusCode === 413) return tooLarge();
  if (fe.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' || fe.statusCode === 415) {
    return problem('unsupported_media_type', 'json');
  }
  if (fe.code === 'FST_ERR_CTP_EMPTY_JSON_BODY') return problem('validation_failed', 'emptyBody');
  if (error instanceof SyntaxError || (fe.code !== undefined && JSON_FAILURES.has(fe.code))) {
    return problem('malformed_json', 'unparsable', { reason: error.message });
  }
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    return problem('bad_request', 'framework', { reason: fe.message }, { status: fe.statusCode });
  }
  return undefined;
}
