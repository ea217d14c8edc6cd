import { STATUS_CODES } from 'node:http';
import {
  messageOf,
  paramCountOf,
  statusOf,
  type MessageName,
  type MessageParams,
  type ProblemCode,
} from './catalogue.js';

/** Where the `type` URI of every problem points: the code is its last path segment. */
export const PROBLEM_TYPE_BASE = 'https://mnemos.dev/problems/';

export interface FieldError {
  pointer: string;
  detail: string;
}

export interface ProblemOptions {
  /** One entry per invalid field, as JSON pointers into the request. */
  errors?: FieldError[] | undefined;
  /** Response headers the answer carries (Retry-After, Allow, WWW-Authenticate, ...). */
  headers?: Record<string, string> | undefined;
  /** Extra members of the problem document (e.g. the scope a credential lacks). */
  extra?: Record<string, unknown> | undefined;
  /** A client error the HTTP framework raised keeps the 4xx status it chose. */
  status?: number | undefined;
}

/** The RFC 9457 problem+json body. */
export interface ProblemDocument {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  errors?: FieldError[];
  [extra: string]: unknown;
}

/** An error a caller sees: a catalogue code, its status and a sentence saying what to do. */
export class Problem extends Error {
  readonly status: number;
  readonly errors: FieldError[] | undefined;
  readonly headers: Record<string, string> | undefined;
  readonly extra: Record<string, unknown>;

  constructor(
    readonly code: ProblemCode,
    readonly detail: string,
    options: ProblemOptions = {},
  ) {
    super(detail);
    this.name = 'Problem';
    this.status = options.status ?? statusOf(code);
    this.errors = options.errors;
    this.headers = options.headers;
    this.extra = options.extra ?? {};
  }

  get type(): string {
    return `${PROBLEM_TYPE_BASE}${this.code}`;
  }

  get title(): string {
    return STATUS_CODES[this.status] ?? 'Error';
  }

  /** The problem+json body; also written outside the web framework (while a server warms or stops). */
  document(): ProblemDocument {
    return {
      type: this.type,
      title: this.title,
      status: this.status,
      detail: this.detail,
      code: this.code,
      ...this.extra,
      ...(this.errors ? { errors: this.errors } : {}),
    };
  }
}

type ParamsAndOptions<C extends ProblemCode, M extends MessageName<C>> =
  MessageParams<C, M> extends [] ? [options?: ProblemOptions] : [...MessageParams<C, M>, options?: ProblemOptions];

/** Builds the problem of one catalogue message: `problem('bank_not_found', 'notCreated', { bankId })`. */
export function problem<C extends ProblemCode, M extends MessageName<C>>(
  code: C,
  message: M,
  ...rest: ParamsAndOptions<C, M>
): Problem {
  const params = rest.slice(0, paramCountOf(code, message)) as MessageParams<C, M>;
  const options = rest[params.length] as ProblemOptions | undefined;
  return new Problem(code, messageOf(code, message, ...params), options);
}
