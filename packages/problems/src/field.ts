import { problem, type Problem } from './problem.js';

/** One invalid field of a request body: the 400 names it by JSON pointer, in the detail and in `errors`. */
export function invalidField(pointer: string, issue: string, where = 'body'): Problem {
  return problem('validation_failed', 'field', { where, pointer, issue }, { errors: [{ pointer, detail: issue }] });
}
