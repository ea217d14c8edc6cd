// Seeded request fuzzing for the engine and gateway fuzz suites: requests are built from a server's own OpenAPI
// document, then their methods, paths, query values, bodies, content types and encodings are mutated. The same seed
// always gives the same requests, so a failure can be replayed.
import assert from 'node:assert/strict';
import { Agent, request as httpRequest } from 'node:http';

/** mulberry32: a tiny, well-known seeded PRNG (deterministic; not for secrets). */
export class Rng {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }
  uuid(): string {
    const hex = Array.from({ length: 32 }, () => this.int(16).toString(16)).join('');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
  }
}

type Schema = Record<string, unknown>;

export interface RouteSpec {
  method: string;
  /** OpenAPI path template, e.g. /v1/{tenant}/banks/{bank}. */
  path: string;
  /**
   * Query parameters; a `required` one is always sent, the others half the time. `hostile` is the chance that a value
   * sent is a hostile one rather than one from its schema (0.5 when absent).
   */
  query: Array<{ name: string; schema: Schema; required?: boolean; hostile?: number }>;
  body: Schema | undefined;
  /** Extra headers the route needs to be reached at all (MCP's Accept). */
  headers?: Record<string, string>;
  /** How the body travels: JSON (the default), or form-encoded as the OAuth endpoints take it (RFC 6749). */
  encoding?: 'json' | 'form';
  /** Wraps a built (and mutated) body before it is sent: an MCP tool's arguments into a JSON-RPC tools/call. */
  wrap?: (body: unknown) => unknown;
  /** What the route's error answers must be: problem+json (the default), or on the OAuth endpoints RFC 6749's. */
  errors?: 'problem' | 'oauth';
  /** Reads an answer below 400 for what its status does not tell (a tool's failure inside an MCP 200). */
  inspect?: (answer: FuzzAnswer) => Inspection;
  /** The route's name in the coverage count; `METHOD path` when absent. */
  name?: string;
}

/** What an answer's body says beyond its status: a server failure, or a refusal (so nothing may have changed). */
export interface Inspection {
  failure?: string;
  refused: boolean;
}

export const routeName = (route: RouteSpec): string => route.name ?? `${route.method} ${route.path}`;

interface OpenApiOperation {
  parameters?: Array<{ in: string; name: string; schema?: Schema }>;
  requestBody?: { content?: Record<string, { schema?: Schema }> };
}

interface OpenApiDocument {
  paths: Record<string, Record<string, OpenApiOperation>>;
  components?: { schemas?: Record<string, Schema> };
}

const HTTP_METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** Every operation of an OpenAPI document, with its query parameters and JSON body schema. */
export function routesFromOpenApi(doc: OpenApiDocument, skip: (path: string) => boolean = () => false): RouteSpec[] {
  const routes: RouteSpec[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    if (skip(path)) continue;
    for (const [method, op] of Object.entries(item)) {
      if (!HTTP_METHODS.includes(method)) continue;
      const query = (op.parameters ?? [])
        .filter((p) => p.in === 'query')
        .map((p) => ({ name: p.name, schema: p.schema ?? {} }));
      const body = op.requestBody?.content?.['application/json']?.schema;
      const resolved = body === undefined ? undefined : resolveRefs(body, doc);
      routes.push({ method: method.toUpperCase(), path, query, body: resolved });
    }
  }
  return routes;
}

/**
 * The route without the `async` body field: async retains finish after their answer, which would blur "a rejected
 * request changes nothing" for the next request.
 */
export function withoutAsync(route: RouteSpec): RouteSpec {
  const body = route.body;
  if (body === undefined) return route;
  const strip = (schema: Schema): Schema => {
    const out: Schema = { ...schema };
    if (out['properties'] !== null && typeof out['properties'] === 'object') {
      const { async: _async, ...properties } = out['properties'] as Record<string, unknown>;
      out['properties'] = properties;
    }
    for (const key of ['allOf', 'anyOf', 'oneOf']) {
      if (Array.isArray(out[key])) out[key] = (out[key] as Schema[]).map(strip);
    }
    return out;
  };
  return { ...route, body: strip(body) };
}

function resolveRefs(schema: Schema, doc: OpenApiDocument, depth = 0): Schema {
  if (depth > 20) return {};
  const ref = schema['$ref'];
  if (typeof ref === 'string') {
    const name = ref.replace(/^#\/components\/schemas\//, '');
    const target = doc.components?.schemas?.[name];
    return target === undefined ? {} : resolveRefs(target, doc, depth + 1);
  }
  const out: Schema = {};
  for (const [k, v] of Object.entries(schema)) {
    if (Array.isArray(v)) {
      out[k] = v.map((x) =>
        x !== null && typeof x === 'object' ? resolveRefs(x as Schema, doc, depth + 1) : (x as unknown),
      );
    } else if (v !== null && typeof v === 'object') {
      out[k] =
        k === 'properties'
          ? Object.fromEntries(
              Object.entries(v as Schema).map(([p, s]) => [p, resolveRefs(s as Schema, doc, depth + 1)]),
            )
          : resolveRefs(v as Schema, doc, depth + 1);
    } else {
      out[k] = v;
    }
  }
  return out;
}

const PLAIN_STRINGS = [
  'known',
  'default',
  'Ada likes green tea',
  'alice@example.com',
  'x',
  'world',
  'valid',
  'any',
  '2024-01-15T10:30:00Z',
  'mid',
];
const NASTY_VALUES: unknown[] = [
  '\u0000',
  'a\u0000b',
  '\ud800',
  'tail \udfff',
  '',
  ' ',
  'x'.repeat(5000),
  '🧠🐙',
  "'; DROP TABLE memories; --",
  '%00',
  '../..',
  1e308,
  -1,
  0,
  1.5,
  2 ** 63,
  -(2 ** 63),
  Number.MAX_SAFE_INTEGER + 2,
  null,
  true,
  false,
  [],
  {},
  [null],
  { '': '' },
  { '\u0000': 'v' },
  { __proto__: { polluted: true } },
  ['\ud800'],
];
const QUERY_VALUES = [
  '1e20',
  '9223372036854775807',
  'Infinity',
  '-Infinity',
  '-1',
  '1.5',
  'NaN',
  '',
  '%00',
  'a%00b',
  '%E0%A4%A',
  '%ED%A0%80',
  'abc',
  '0',
  '1',
  '10',
  '1000',
  '1001',
  'true',
  'world',
  'valid',
  'x'.repeat(3000),
  '%F0%9F%A7%A0',
];
const PATH_VALUES = [
  '%00',
  'a%00b',
  '%E0%A4%A',
  '%zz',
  '%ED%A0%80',
  'x'.repeat(300),
  '..',
  '%2E%2E',
  'a%2Fb',
  '%20',
  '%F0%9F%A7%A0',
  'UPPER',
  'with.dots',
  '%25',
  '-',
  '0',
];
const CONTENT_TYPES: Array<string | undefined> = [
  undefined,
  'text/plain',
  'application/x-www-form-urlencoded',
  'application/json; charset=utf-8',
  'application/vnd.api+json',
  'multipart/form-data; boundary=x',
  'application/json;;;',
  'application/json; charset=latin1',
  '*/*',
  'garbage',
];
const RAW_BODIES: Array<string | Buffer> = [
  '',
  '{',
  'null',
  '[]',
  '"text"',
  '{"a":1}}',
  '{"content": "x",}',
  '12',
  'true',
  Buffer.from([0xff, 0xfe, 0x7b, 0x7d]),
  Buffer.from('{"content":"\xc3\x28"}', 'latin1'),
  '{"content":"\\ud800"}',
  '{"__proto__":{"x":1}}',
  '{"constructor":{"prototype":{"x":1}}}',
  '[' + '{"a":'.repeat(70) + '1' + '}'.repeat(70) + ']',
];
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/** A value that satisfies (most of) a JSON schema; the fuzzer then breaks it. */
export function sample(rng: Rng, schema: Schema, depth = 0): unknown {
  if (depth > 6) return null;
  const choices = (schema['anyOf'] ?? schema['oneOf']) as Schema[] | undefined;
  if (choices !== undefined && choices.length > 0) return sample(rng, rng.pick(choices), depth + 1);
  if (Array.isArray(schema['allOf'])) {
    return Object.assign({}, ...(schema['allOf'] as Schema[]).map((s) => sample(rng, s, depth + 1)));
  }
  if ('const' in schema) return schema['const'];
  if (Array.isArray(schema['enum'])) return rng.pick(schema['enum'] as unknown[]);
  const rawType = schema['type'];
  const type = Array.isArray(rawType) ? rng.pick(rawType as string[]) : rawType;
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      const required = new Set((schema['required'] as string[] | undefined) ?? []);
      for (const [name, sub] of Object.entries((schema['properties'] as Record<string, Schema> | undefined) ?? {})) {
        if (required.has(name) || rng.chance(0.4)) out[name] = sample(rng, sub, depth + 1);
      }
      return out;
    }
    case 'array': {
      const items = (schema['items'] as Schema | undefined) ?? { type: 'string' };
      const length = rng.int(3) + (Number(schema['minItems'] ?? 0) > 0 ? 1 : 0);
      return Array.from({ length }, () => sample(rng, items, depth + 1));
    }
    case 'integer':
    case 'number': {
      const min = typeof schema['minimum'] === 'number' ? schema['minimum'] : 0;
      const max = typeof schema['maximum'] === 'number' ? schema['maximum'] : 100;
      return rng.pick([min, max, min + rng.int(Math.max(1, Math.min(max - min, 100)))]);
    }
    case 'boolean':
      return rng.chance(0.5);
    case 'null':
      return null;
    case 'string':
      if (schema['format'] === 'uuid') return rng.uuid();
      if (schema['format'] === 'email') return rng.pick(['fuzz@example.com', 'ada@example.com', 'not-an-email']);
      if (schema['format'] === 'date-time') return '2030-01-01T00:00:00Z';
      if (schema['format'] === 'uri') return 'https://example.com/callback';
      return rng.pick(PLAIN_STRINGS);
    default:
      return rng.pick(PLAIN_STRINGS);
  }
}

/** Replaces one value somewhere in a body (or adds a key) with a hostile one. */
function mutateValue(rng: Rng, value: unknown): unknown {
  if (value === null || typeof value !== 'object' || rng.chance(0.2)) return rng.pick(NASTY_VALUES);
  if (Array.isArray(value)) {
    if (value.length === 0) return [rng.pick(NASTY_VALUES)];
    const i = rng.int(value.length);
    return (value as unknown[]).map((v, j) => (j === i ? mutateValue(rng, v) : v));
  }
  const entries = Object.entries(value);
  if (entries.length === 0 || rng.chance(0.2)) {
    const key = rng.pick(['extra', 'content', 'query', 'x\u0000', 'metadata', 'tags']);
    return { ...value, [key]: rng.pick(NASTY_VALUES) };
  }
  const [key] = rng.pick(entries);
  if (rng.chance(0.15)) {
    const copy: Record<string, unknown> = { ...value };
    Reflect.deleteProperty(copy, key);
    return copy;
  }
  return { ...value, [key]: mutateValue(rng, (value as Record<string, unknown>)[key]) };
}

/** A value as an HTML form: an object's fields as fields (a list as repeated fields), anything else as JSON text. */
function formText(value: unknown): string {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return JSON.stringify(value);
  const form = new URLSearchParams();
  for (const [key, field] of Object.entries(value)) {
    for (const item of Array.isArray(field) ? (field as unknown[]) : [field]) {
      form.append(key, typeof item === 'string' ? item : JSON.stringify(item));
    }
  }
  return form.toString();
}

/** JSON text of a value wrapped `depth` objects deep (written as text: JSON.stringify would overflow the stack). */
function nestedJson(value: unknown, depth: number): string {
  return '{"n":'.repeat(depth) + JSON.stringify(value) + '}'.repeat(depth);
}

export interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string | Buffer | undefined;
}

export interface RequestContext {
  /** A usually valid value for a path parameter (tenant, bank, memory id...). */
  param(name: string, rng: Rng, route: RouteSpec): string;
  /** Headers every request carries (credentials), chosen per request. */
  headers(route: RouteSpec, rng: Rng): Record<string, string>;
}

/** One mutated request for a route: mostly well-formed with one or two broken parts, so the checks go deep. */
export function buildRequest(rng: Rng, route: RouteSpec, ctx: RequestContext): FuzzRequest {
  const method = rng.chance(0.85) ? route.method : rng.pick(METHODS);
  let path = route.path.replace(/\{([^}]+)\}/g, (_m, name: string) =>
    rng.chance(0.8) ? encodeURIComponent(ctx.param(name, rng, route)) : rng.pick(PATH_VALUES),
  );
  if (rng.chance(0.05)) path += rng.pick(['/', '//', '/extra', '%', '?']);
  const query: string[] = [];
  for (const q of route.query) {
    if (q.required !== true && !rng.chance(0.5)) continue;
    const hostile = rng.chance(q.hostile ?? 0.5);
    const value = hostile ? rng.pick(QUERY_VALUES) : encodeURIComponent(String(sample(rng, q.schema)));
    query.push(`${q.name}=${value}`);
    if (rng.chance(0.1)) query.push(`${q.name}=${rng.pick(QUERY_VALUES)}`);
  }
  if (rng.chance(0.05)) {
    query.push(rng.pick(['__proto__=x', 'constructor[prototype]=1', 'a[]=1&a[]=2', '%zz=1', '=', '&&']));
  }
  if (query.length > 0) path += `?${query.join('&')}`;

  const headers: Record<string, string> = { ...(route.headers ?? {}), ...ctx.headers(route, rng) };
  let body: string | Buffer | undefined;
  const roll = rng.next();
  if (route.body !== undefined || rng.chance(0.1)) {
    const valid = sample(rng, route.body ?? { type: 'object' });
    const wrap = route.wrap ?? ((value: unknown) => value);
    const form = route.encoding === 'form' && roll < 0.75;
    const encode = form ? formText : (value: unknown) => JSON.stringify(value);
    if (roll < 0.3) body = encode(wrap(valid));
    else if (roll < 0.75) body = encode(wrap(mutateValue(rng, valid)));
    else if (roll < 0.85) body = nestedJson(valid, rng.pick([10, 63, 65, 500, 8000]));
    else body = rng.pick(RAW_BODIES);
    headers['content-type'] = form ? 'application/x-www-form-urlencoded' : 'application/json';
  }
  if (rng.chance(0.12)) {
    const type = rng.pick(CONTENT_TYPES);
    if (type === undefined) delete headers['content-type'];
    else headers['content-type'] = type;
  }
  if (body === undefined && rng.chance(0.1)) headers['content-type'] = 'application/json';
  return { method, path, headers, body };
}

export interface FuzzAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/**
 * Sends one request as is (no path normalisation) on the given agent. The body length is always declared: Node's
 * client would otherwise send a GET or DELETE body unframed, and the server would read it as the next request.
 */
export function send(base: string, agent: Agent, r: FuzzRequest): Promise<FuzzAnswer> {
  const url = new URL(base);
  const length = r.body === undefined ? {} : { 'content-length': String(Buffer.byteLength(r.body)) };
  const headers = { ...r.headers, ...length };
  const options = { host: url.hostname, port: url.port, method: r.method, path: r.path, headers, agent };
  return new Promise((resolve, reject) => {
    const req = httpRequest(options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(r.body);
  });
}

/** Why an error answer is not a proper problem+json (undefined when it is). */
export function problemShapeError(method: string, answer: FuzzAnswer): string | undefined {
  const type = String(answer.headers['content-type'] ?? '');
  if (!type.startsWith('application/problem+json')) return `content-type ${type}`;
  if (method === 'HEAD') return undefined;
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch {
    return 'body is not JSON';
  }
  const b = body as Record<string, unknown>;
  if (typeof b['code'] !== 'string' || typeof b['detail'] !== 'string' || b['status'] !== answer.status) {
    return 'missing code, detail or status';
  }
  return undefined;
}

/** An OAuth error code (RFC 6749 5.2): printable ASCII without `"` and `\\`. */
const OAUTH_ERROR_CODE = /^[\x20\x21\x23-\x5b\x5d-\x7e]+$/;

/**
 * Why an error answer of an OAuth endpoint is not one of the shapes it may take (undefined when it is one): RFC 6749's
 * error JSON `{error, error_description?}`, the authorization endpoint's error page naming the code, or the gateway's
 * own problem+json (an input-layer refusal before the OAuth server sees the request).
 */
export function oauthErrorShapeError(method: string, answer: FuzzAnswer): string | undefined {
  const type = String(answer.headers['content-type'] ?? '');
  if (type.startsWith('application/problem+json')) return problemShapeError(method, answer);
  if (method === 'HEAD') return undefined;
  if (type.startsWith('text/html')) {
    return /<code>[^<]+<\/code>/.test(answer.text) ? undefined : 'an HTML error page that names no error code';
  }
  if (!type.startsWith('application/json')) return `content-type ${type}`;
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch {
    return 'body is not JSON';
  }
  const b = (body ?? {}) as Record<string, unknown>;
  if (typeof b['error'] !== 'string' || !OAUTH_ERROR_CODE.test(b['error'])) return 'no RFC 6749 error code';
  if (b['error_description'] !== undefined && typeof b['error_description'] !== 'string') {
    return 'error_description is not a string';
  }
  return undefined;
}

const errorShapeError = (route: RouteSpec, method: string, answer: FuzzAnswer): string | undefined =>
  route.errors === 'oauth' ? oauthErrorShapeError(method, answer) : problemShapeError(method, answer);

/** Polls a liveness path on its own connection and keeps the slowest answer time. */
export class LivenessProbe {
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 1 });
  private running = true;
  private loop: Promise<void> | undefined;
  slowestMs = 0;
  /** What the fuzz was sending while the slowest probe waited, to point at the request that held the server. */
  slowestDuring = '';
  probes = 0;

  constructor(
    private readonly base: string,
    private readonly path: string,
    private readonly inFlight: () => string,
    private readonly intervalMs = 25,
  ) {}

  start(): void {
    this.loop = (async () => {
      while (this.running) {
        const started = performance.now();
        const probe = { method: 'GET', path: this.path, headers: {}, body: undefined };
        const answer = await send(this.base, this.agent, probe);
        const took = performance.now() - started;
        if (answer.status !== 200) throw new Error(`liveness answered ${answer.status}`);
        this.probes++;
        if (took > this.slowestMs) {
          this.slowestMs = took;
          this.slowestDuring = this.inFlight();
        }
        await new Promise((r) => setTimeout(r, this.intervalMs));
      }
    })();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
    this.agent.destroy();
  }
}

export interface FuzzStats {
  seed: number;
  requests: number;
  statusClasses: Record<string, number>;
  /** 5xx answers the run allowed by design (counted within statusClasses too). */
  allowedServerErrors: number;
  slowestLivenessMs: number;
  slowestLivenessDuring: string;
  livenessProbes: number;
  seconds: number;
  /** How many routes the run drew from, and the fewest requests any of them got. */
  routes: number;
  fewestPerRoute: number;
}

export interface FuzzRun {
  base: string;
  routes: RouteSpec[];
  ctx: RequestContext;
  seed: number;
  requests: number;
  livenessPath: string;
  /** A fingerprint of stored state; a rejected request must leave it unchanged. */
  snapshot(): Promise<string>;
  /** 5xx answers the server may give by design (for example 503 when no LLM is configured). */
  allowedServerError?(answer: FuzzAnswer): boolean;
  /**
   * Called after each answer, to restore what a request may end by design (a signed-out console session, a deleted
   * client); answers true when it changed stored state.
   */
  afterAnswer?(route: RouteSpec, answer: FuzzAnswer): Promise<boolean>;
}

/** Sends the requests one at a time (so state changes can be attributed) and checks every property. */
export async function runFuzz(run: FuzzRun): Promise<{ stats: FuzzStats; failures: string[] }> {
  const rng = new Rng(run.seed);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  let inFlight = '';
  const probe = new LivenessProbe(run.base, run.livenessPath, () => inFlight);
  const classes: Record<string, number> = {};
  const hits = new Map(run.routes.map((r) => [routeName(r), 0]));
  const failures: string[] = [];
  let allowedServerErrors = 0;
  let known: string | undefined;
  const started = performance.now();
  probe.start();
  try {
    for (let i = 0; i < run.requests; i++) {
      const route = rng.pick(run.routes);
      hits.set(routeName(route), (hits.get(routeName(route)) ?? 0) + 1);
      const req = buildRequest(rng, route, run.ctx);
      inFlight = `#${i} ${req.method} ${route.path}`;
      // After a rejected request the state is known (it was just checked), so only a success costs a fresh snapshot.
      const before = known ?? (await run.snapshot());
      known = undefined;
      let answer: FuzzAnswer;
      try {
        answer = await send(run.base, agent, req);
      } catch (error) {
        const sent = `${JSON.stringify(req.headers)} ${String(req.body).slice(0, 80)}`;
        failures.push(`#${i} ${req.method} ${req.path.slice(0, 160)} ${sent}: ${String(error)}`);
        continue;
      }
      const cls = `${Math.floor(answer.status / 100)}xx`;
      classes[cls] = (classes[cls] ?? 0) + 1;
      const where = `#${i} ${req.method} ${req.path.slice(0, 160)} -> ${answer.status}`;
      if (answer.status >= 500) {
        if (run.allowedServerError?.(answer) ?? false) allowedServerErrors++;
        else failures.push(`${where}: ${answer.text.slice(0, 300)}`);
      }
      const inspection = answer.status < 400 ? route.inspect?.(answer) : undefined;
      if (inspection?.failure !== undefined) failures.push(`${where}: ${inspection.failure}`);
      if (answer.status >= 400) {
        const shape = errorShapeError(route, req.method, answer);
        if (shape !== undefined) failures.push(`${where}: not a proper error (${shape}): ${answer.text.slice(0, 200)}`);
      }
      if (answer.status >= 400 || inspection?.refused === true) {
        const after = await run.snapshot();
        if (after !== before) failures.push(`${where}: a rejected request changed state ${before} -> ${after}`);
        known = after;
      }
      if ((await run.afterAnswer?.(route, answer)) === true) known = undefined;
      if (failures.length >= 25) break;
    }
  } finally {
    await probe.stop();
    agent.destroy();
  }
  return {
    stats: {
      seed: run.seed,
      requests: Object.values(classes).reduce((a, b) => a + b, 0),
      statusClasses: classes,
      allowedServerErrors,
      slowestLivenessMs: Math.round(probe.slowestMs * 10) / 10,
      slowestLivenessDuring: probe.slowestDuring,
      livenessProbes: probe.probes,
      seconds: Math.round((performance.now() - started) / 100) / 10,
      routes: hits.size,
      fewestPerRoute: Math.min(...hits.values()),
    },
    failures,
  };
}

/** The seed and length of a run; set MNEMOS_FUZZ_SEED and MNEMOS_FUZZ_REQUESTS to replay or lengthen one. */
export const FUZZ_SEED = Number(process.env['MNEMOS_FUZZ_SEED'] ?? 20261124);
export const FUZZ_REQUESTS = Number(process.env['MNEMOS_FUZZ_REQUESTS'] ?? 3000);
/**
 * The slowest a liveness probe may answer during a run. The probe's wait includes the operating system's scheduling,
 * so on a machine whose cores are shared with other busy processes MNEMOS_FUZZ_LIVENESS_MS can raise it.
 */
export const LIVENESS_LIMIT_MS = Number(process.env['MNEMOS_FUZZ_LIVENESS_MS'] ?? 200);
/** MCP's streamable HTTP transport needs this Accept header before it reads a body. */
export const MCP_ACCEPT = { accept: 'application/json, text/event-stream' };

/**
 * Runs the fuzz with the shared seed, length and liveness path, prints the figures (docs/security.md records them) and
 * asserts every property. The only 5xx allowed is 503 llm_not_configured: the test servers have no LLM.
 */
export async function fuzzAndCheck(
  label: string,
  run: Omit<FuzzRun, 'seed' | 'requests' | 'livenessPath' | 'allowedServerError'>,
): Promise<void> {
  assert.ok(run.routes.length > 20, `routes from /openapi.json: ${run.routes.length}`);
  const { stats, failures } = await runFuzz({
    ...run,
    seed: FUZZ_SEED,
    requests: FUZZ_REQUESTS,
    livenessPath: '/health/live',
    allowedServerError: (answer) => answer.status === 503 && answer.text.includes('"llm_not_configured"'),
  });
  console.log(`${label} fuzz: ${JSON.stringify(stats)}`);
  assert.deepEqual(failures, []);
  assert.equal(stats.requests, FUZZ_REQUESTS);
  // Every route is reached (a run long enough to reach each one several times, on average, is held to it).
  if (FUZZ_REQUESTS >= 5 * stats.routes) assert.ok(stats.fewestPerRoute > 0, 'a route got no request');
  assert.ok(stats.livenessProbes > 0);
  assert.ok(stats.slowestLivenessMs <= LIVENESS_LIMIT_MS, `slowest /health/live: ${stats.slowestLivenessMs} ms`);
}
