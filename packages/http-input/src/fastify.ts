import type { IncomingHttpHeaders } from 'node:http';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import FindMyWay from 'find-my-way';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { exceedsJsonDepth, MAX_JSON_DEPTH } from './json-depth.js';
import { invalidField } from '@mnemos/problems';
import { methodNotAllowed, tooDeep, unsupportedMediaType, type InputProblem } from './problems.js';
import { pointerInto, type RequestPart } from './request-errors.js';
import { findUnstorableText } from './text.js';
import { validatorCompiler } from './validator.js';

/** Methods that carry no body: a JSON content type with an empty body is what many HTTP clients send on them. */
export const METHODS_WITHOUT_BODY: ReadonlySet<string> = new Set(['GET', 'HEAD', 'DELETE', 'OPTIONS']);
const ROUTABLE_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

export interface InputLayerOptions {
  /** The router options the server uses, so path matching for 405 agrees with it. */
  ignoreTrailingSlash?: boolean;
  maxParamLength?: number;
}

export interface InputLayer {
  /** A 405 problem when the path exists under other methods, else undefined (a real 404). */
  wrongMethod(request: FastifyRequest): InputProblem | undefined;
}

function hasNoBody(headers: IncomingHttpHeaders): boolean {
  const length = headers['content-length'];
  return headers['transfer-encoding'] === undefined && (length === undefined || length === '0');
}

/**
 * Bodies of at least this many characters are parsed, checked, validated and handled in turns of the event loop of
 * their own (installLargeBodyTurns): each step is a pass over the whole text (several milliseconds per MiB), and one
 * turn for all of them would hold the loop for their sum.
 */
const LARGE_BODY_CHARS = 64 * 1024;

/** Requests whose body is large (see LARGE_BODY_CHARS). */
const largeBodies = new WeakSet<FastifyRequest>();

/** JSON bodies only; an empty body on a body-less method is no body; depth is checked before JSON.parse. */
function installBodyParsers(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.length === 0 && METHODS_WITHOUT_BODY.has(request.method)) {
      done(null, undefined);
    } else if (exceedsJsonDepth(text, MAX_JSON_DEPTH)) {
      done(tooDeep(MAX_JSON_DEPTH), undefined);
    } else if (text.length >= LARGE_BODY_CHARS) {
      largeBodies.add(request);
      void parseJson(request, text, (error, parsed) => setImmediate(() => done(error, parsed)));
    } else {
      void parseJson(request, text, done);
    }
  });
  app.addContentTypeParser('*', (request, _payload, done) => {
    if (METHODS_WITHOUT_BODY.has(request.method) && hasNoBody(request.headers)) done(null, undefined);
    else done(unsupportedMediaType(), undefined);
  });
}

/** NUL characters and lone surrogates are refused in every string of the path, the query and the body. */
function installTextCheck(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    const parts: Array<[RequestPart, unknown]> = [
      ['params', request.params],
      ['querystring', request.query],
      ['body', request.body],
    ];
    for (const [part, value] of parts) {
      const bad = findUnstorableText(value);
      if (bad === undefined) continue;
      throw invalidField(pointerInto(part, bad.pointer), bad.detail, part);
    }
  });
}

/**
 * A large body is checked (the text check), validated against its schema and handled in turns of the event loop of
 * their own, so other requests are answered between the steps. Installed after the text check, which runs first.
 */
function installLargeBodyTurns(app: FastifyInstance): void {
  const nextTurn = async (request: FastifyRequest) => {
    if (largeBodies.has(request)) await yieldToEventLoop();
  };
  app.addHook('preValidation', nextTurn);
  app.addHook('preHandler', nextTurn);
}

/** Records every route's path in a router of its own, so a miss can tell "wrong method" (405) from "no such path". */
function installMethodIndex(app: FastifyInstance, options: InputLayerOptions): InputLayer {
  const router = FindMyWay({
    ignoreTrailingSlash: options.ignoreTrailingSlash ?? false,
    ...(options.maxParamLength !== undefined ? { maxParamLength: options.maxParamLength } : {}),
  });
  const seen = new Set<string>();
  app.addHook('onRoute', (route) => {
    // Catch-all routes (CORS preflight on `*`) would make every unknown path a 405.
    if (route.url === '*' || route.url === '/*') return;
    for (const method of Array.isArray(route.method) ? route.method : [route.method]) {
      const key = `${method} ${route.url}`;
      if (seen.has(key) || !(ROUTABLE_METHODS as readonly string[]).includes(method)) continue;
      seen.add(key);
      router.on(method as FindMyWay.HTTPMethod, route.url, () => undefined);
    }
  });
  return {
    wrongMethod(request) {
      const path = request.url.split('?')[0] ?? '/';
      let allow: string[];
      try {
        allow = ROUTABLE_METHODS.filter((m) => router.find(m, path) !== null);
      } catch {
        return undefined;
      }
      if (allow.includes('GET') && !allow.includes('HEAD')) allow.splice(allow.indexOf('GET') + 1, 0, 'HEAD');
      if (allow.length === 0 || allow.includes(request.method)) return undefined;
      return methodNotAllowed(request.method, path, allow);
    },
  };
}

/**
 * Installs the shared input layer on a Fastify app before any route or plugin is registered: JSON-only body parsing
 * with a depth cap, empty bodies on body-less methods, schema validation, the text check, turns of their own for the
 * steps of a large body, and the route index for 405 answers. The server's error handler answers what it raises through inputErrorProblem.
 */
export function installInputLayer(app: FastifyInstance, options: InputLayerOptions = {}): InputLayer {
  installBodyParsers(app);
  app.setValidatorCompiler(validatorCompiler);
  installTextCheck(app);
  installLargeBodyTurns(app);
  return installMethodIndex(app, options);
}
