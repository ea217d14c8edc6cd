// The one way the console talks to the gateway: same-origin fetch with the session cookie, the CSRF token on every
// state-changing call, the project header for /v1/me routes, and problem+json answers turned into ApiError.

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
  ) {
    super(detail);
    this.name = 'ApiError';
  }
}

let csrfToken: string | null = null;

/** The session's CSRF token, sent as X-CSRF-Token on POST, PUT, PATCH and DELETE. */
export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

export type Query = Record<string, string | number | boolean | undefined | null>;

export interface RequestOptions {
  body?: unknown;
  /** The project a /v1/me route acts on (header X-Mnemos-Project). */
  project?: string;
  query?: Query;
}

const SAFE_METHODS = new Set(['GET', 'HEAD']);

function withQuery(path: string, query: Query | undefined): string {
  if (query === undefined) return path;
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && value !== null && value !== '') params.set(name, String(value));
  }
  const text = params.toString();
  return text === '' ? path : `${path}?${text}`;
}

async function problemOf(res: Response): Promise<ApiError> {
  const text = await res.text();
  let detail = `The gateway answered ${res.status} ${res.statusText}.`;
  let code = 'http_error';
  try {
    const body = JSON.parse(text) as { detail?: unknown; code?: unknown };
    if (typeof body.detail === 'string' && body.detail !== '') detail = body.detail;
    if (typeof body.code === 'string') code = body.code;
  } catch {
    // Not a problem document (a proxy's error page): keep the status line.
  }
  return new ApiError(res.status, code, detail);
}

/** A call's body as bytes to send unchanged (a file), with its media type. */
export interface RawBody {
  blob: Blob;
  type: string;
}

async function send(method: string, path: string, options: RequestOptions, raw?: RawBody): Promise<Response> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (options.project !== undefined) headers['x-mnemos-project'] = options.project;
  if (!SAFE_METHODS.has(method) && csrfToken !== null) headers['x-csrf-token'] = csrfToken;
  let body: string | Blob | undefined;
  if (raw !== undefined) {
    body = raw.blob;
    headers['content-type'] = raw.type;
  } else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] = 'application/json';
  }
  let res: Response;
  try {
    res = await fetch(withQuery(path, options.query), { method, headers, body, credentials: 'same-origin' });
  } catch {
    throw new ApiError(0, 'network_error', 'Cannot reach the gateway; check your connection and try again.');
  }
  if (!res.ok) throw await problemOf(res);
  return res;
}

export async function api<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
  const res = await send(method, path, options);
  if (res.status === 204) return undefined as T;
  return (await res.json()) as T;
}

/** A GET whose answer is a file to save (an export), whole. */
export async function download(path: string, options: RequestOptions = {}): Promise<Blob> {
  return (await send('GET', path, options)).blob();
}

/** A POST of a file's bytes as they are (an import), answered with JSON. */
export async function upload<T>(path: string, raw: RawBody, options: RequestOptions = {}): Promise<T> {
  return (await (await send('POST', path, options, raw)).json()) as T;
}

/** A message for anything thrown: an API problem's detail, or a plain description. */
export function messageOf(error: unknown): string {
  if (error instanceof ApiError) return error.detail;
  if (error instanceof Error) return error.message;
  return String(error);
}
