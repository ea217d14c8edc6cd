// Serves the built console app (packages/console/dist) under /console/, with a fallback to index.html for the app's
// own routes, a Content-Security-Policy that allows only this origin, and no framing. Without a build, /console/
// answers 503 saying how to build it.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { problem } from '@mnemos/problems';
import { sendProblem } from '../problem.js';

/** The console package's build folder, from this module in packages/gateway/{src,dist}/console/. */
export const DEFAULT_CONSOLE_DIR = fileURLToPath(new URL('../../../console/dist', import.meta.url));

/** Scripts, styles, images, fonts and API calls from this origin only; never inside a frame. */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "img-src 'self' data:",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const CONSOLE_HEADERS: Record<string, string> = {
  'content-security-policy': CONSOLE_CSP,
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
};

const hidden = { schema: { hide: true } };

/** Vite names built assets by their content, so they never change under their name. */
const cacheControlOf = (filePath: string): string =>
  filePath.split(path.sep).includes('assets') ? 'public, max-age=31536000, immutable' : 'no-cache';

/**
 * Whether a path under /console/ names a file of the build that is not there (a 404), rather than a route of the app.
 * The build holds files at its top level and under assets/ only; deeper paths are the app's routes, whose segments
 * may hold dots or escapes (a bank id such as `alice%40example.com`).
 */
export function isMissingBuildFile(urlPath: string): boolean {
  const segments = urlPath.replace(/^\/console\//, '').split('/');
  if (segments[0] === 'assets') return true;
  return segments.length === 1 && (segments[0] ?? '').includes('.');
}

const prefersHtml = (request: FastifyRequest): boolean => (request.headers.accept ?? '').includes('text/html');

const escapeHtml = (text: string): string =>
  text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] ?? c);

const notBuiltPage = (detail: string): string =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Mnemos console not built</title></head>` +
  `<body><h1>The console is not built</h1><p>${escapeHtml(detail)}</p></body></html>\n`;

export async function consoleRoutes(app: FastifyInstance, dir: string = DEFAULT_CONSOLE_DIR): Promise<void> {
  const root = path.resolve(dir);
  const built = existsSync(path.join(root, 'index.html'));
  await app.register(async (scope) => {
    scope.addHook('onSend', async (_request, reply, payload) => {
      reply.headers(CONSOLE_HEADERS);
      return payload;
    });
    const toApp = async (_request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> =>
      reply.redirect('/console/', 302);
    scope.get('/', hidden, toApp);
    scope.get('/console', hidden, toApp);

    if (!built) {
      const notBuilt = problem('console_not_built', 'missing', { indexFile: path.join(root, 'index.html') });
      app.log.warn(notBuilt.detail);
      // A person opening the console in a browser reads a page; a program asking for JSON reads the problem.
      scope.get('/console/*', hidden, async (request, reply) =>
        prefersHtml(request)
          ? reply.code(503).type('text/html; charset=utf-8').send(notBuiltPage(notBuilt.detail))
          : sendProblem(reply, notBuilt),
      );
      return;
    }
    // The files are listed once at start (wildcard: false), so every other path under /console/ reaches the fallback.
    await scope.register(fastifyStatic, {
      root,
      prefix: '/console/',
      wildcard: false,
      index: false,
      cacheControl: false,
      serveDotFiles: false,
      setHeaders: (reply, filePath) => {
        reply.header('cache-control', cacheControlOf(filePath));
      },
    });
    scope.get('/console/*', hidden, async (request, reply) => {
      const urlPath = request.url.split('?')[0] ?? '';
      if (isMissingBuildFile(urlPath)) {
        return sendProblem(reply, problem('not_found', 'noConsoleFile', { path: urlPath }));
      }
      return reply.header('cache-control', 'no-cache').sendFile('index.html');
    });
  });
}
