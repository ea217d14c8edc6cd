/** Codes for which a retry cannot help, even when they come with 429 or 503. */
export const PERMANENT_CODES: ReadonlySet<string> = new Set([
  'llm_not_configured',
  'encryption_key_mismatch',
  'quota_exceeded',
]);

/** The code used when an error answer carries none (a proxy's HTML page, an older server). */
const DEFAULT_CODES: Record<number, string> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  422: 'validation_failed',
  429: 'rate_limited',
  500: 'internal_error',
  502: 'bad_gateway',
  503: 'service_unavailable',
  504: 'gateway_timeout',
};

export interface FieldError {
  pointer: string;
  detail: string;
}

export interface MnemosErrorInit {
  status: number;
  code: string;
  detail: string;
  title?: string | undefined;
  type?: string | undefined;
  errors?: FieldError[] | undefined;
  retryAfter?: number | undefined;
  cause?: unknown;
}

/**
 * Every failed call: a non-2xx answer (an RFC 9457 problem document, or plain text from a proxy), a timeout
 * (`code: "timeout"`), a connection failure (`"connection_error"`), an abort through an AbortSignal (`"aborted"`) or
 * an unreadable answer (`"invalid_response"`). `status` is the HTTP status, 0 when no answer arrived.
 */
export class MnemosError extends Error {
  override readonly name = 'MnemosError';
  readonly status: number;
  readonly code: string;
  readonly detail: string;
  readonly title: string | undefined;
  readonly type: string | undefined;
  readonly errors: FieldError[] | undefined;
  /** Seconds the server asked to wait (`Retry-After`), when it said. */
  readonly retryAfter: number | undefined;

  constructor(init: MnemosErrorInit) {
    super(
      `${init.detail} (${init.code}${init.status ? `, HTTP ${init.status}` : ''})`,
      init.cause === undefined ? undefined : { cause: init.cause },
    );
    this.status = init.status;
    this.code = init.code;
    this.detail = init.detail;
    this.title = init.title;
    this.type = init.type;
    this.errors = init.errors;
    this.retryAfter = init.retryAfter;
  }

  toJSON(): Record<string, unknown> {
    return {
      status: this.status,
      code: this.code,
      detail: this.detail,
      ...(this.errors ? { errors: this.errors } : {}),
    };
  }
}

/** Seconds to wait from a `Retry-After` header (delta-seconds or an HTTP date); undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | undefined {
  if (value === null || value === undefined || value.trim() === '') return undefined;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text);
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, (at - now) / 1000);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const textOf = (value: unknown): string => (typeof value === 'string' ? value : '');

function fieldErrors(value: unknown): FieldError[] | undefined {
  if (!Array.isArray(value)) return undefined;
  return value.filter(isRecord).map((e) => ({ pointer: textOf(e['pointer']), detail: textOf(e['detail']) }));
}

/** Builds the error for a non-2xx answer from its status, Retry-After header and body text. */
export function errorFromAnswer(status: number, retryAfterHeader: string | null, text: string): MnemosError {
  const retryAfter = parseRetryAfter(retryAfterHeader);
  const fallback = DEFAULT_CODES[status] ?? (status >= 500 ? 'server_error' : 'client_error');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (!isRecord(body)) {
    const snippet = text.trim().slice(0, 300);
    return new MnemosError({
      status,
      code: fallback,
      detail: snippet === '' ? `HTTP ${status} with an empty body.` : snippet,
      retryAfter,
    });
  }
  // problem+json; also the {detail} / {error: {message}} shapes other servers answer with.
  const nested = isRecord(body['error']) ? body['error'] : undefined;
  const detail = [body['detail'], body['message'], nested?.['message'], body['title']].find(
    (d) => typeof d === 'string' && d !== '',
  );
  const code = [body['code'], nested?.['code']].find((c) => typeof c === 'string' && c !== '');
  return new MnemosError({
    status,
    code: typeof code === 'string' ? code : fallback,
    detail: typeof detail === 'string' ? detail : `HTTP ${status}.`,
    title: typeof body['title'] === 'string' ? body['title'] : undefined,
    type: typeof body['type'] === 'string' ? body['type'] : undefined,
    errors: fieldErrors(body['errors']),
    retryAfter,
  });
}
