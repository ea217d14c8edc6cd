export { CATALOGUE, messageOf, statusOf, type MessageName, type MessageParams, type ProblemCode } from './catalogue.js';
export {
  PROBLEM_TYPE_BASE,
  Problem,
  problem,
  type FieldError,
  type ProblemDocument,
  type ProblemOptions,
} from './problem.js';
export { invalidField } from './field.js';
export { documentProblems, type DocumentedProblems, type ProblemResponse } from './openapi.js';
