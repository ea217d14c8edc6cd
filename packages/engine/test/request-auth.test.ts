// An engine with MNEMOS_API_AUTH_TOKEN refuses a request without the token before reading its body: the 401 goes out
// as soon as the headers are in, and the connection is closed, so a client cannot make the engine receive a body
// (on REST or on the MCP endpoint) without the token.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { call, startTestEngine, type TestEngine } from './helpers/engine.js';

const TOKEN = 'request-auth-test-token-0123456789';
let engine: TestEngine;

before(async () => {
  // A request timeout far beyond the test's own: a connection the engine kept open for the body would not be closed
  // by the timeout within the test, so only an engine that closes it at once passes.
  engine = await startTestEngine({ MNEMOS_API_AUTH_TOKEN: TOKEN, MNEMOS_API_REQUEST_TIMEOUT_MS: '3600000' });
});
after(async () => {
  await engine?.dispose();
});

interface Refusal {
  /** The server's answer, head and body, once its body is complete. */
  answer: Promise<{ head: string; body: string }>;
  /** Settles when the server ends or closes the connection. */
  ended: Promise<void>;
  /** Body bytes the client has sent. */
  sentBytes(): number;
}

/**
 * Declares a 1 MiB body, sends its first 16 KiB and never the rest. The client keeps its own side open, so an end of
 * the connection is the server's decision.
 */
function partialUpload(path: string, headers: string, framing: 'length' | 'chunked' = 'length'): Refusal {
  const { hostname, port } = new URL(engine.url);
  const socket = net.connect(Number(port), hostname);
  const piece = Buffer.alloc(16 * 1024, 0x20);
  let sentBytes = 0;
  let received = Buffer.alloc(0);
  const answer = new Promise<{ head: string; body: string }>((resolve, reject) => {
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const text = received.toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      if (split < 0) return;
      const head = text.slice(0, split);
      const length = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1] ?? NaN);
      const body = text.slice(split + 4);
      if (Buffer.byteLength(body) >= length) resolve({ head, body });
    });
    socket.on('error', reject);
  });
  const ended = new Promise<void>((resolve) => {
    socket.on('end', resolve);
    socket.on('close', resolve);
  }).finally(() => socket.destroy());
  socket.on('connect', () => {
    const length = framing === 'length' ? 'Content-Length: 1048576' : 'Transfer-Encoding: chunked';
    socket.write(
      `POST ${path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nContent-Type: application/json\r\n` +
        `Accept: application/json, text/event-stream\r\n${headers}${length}\r\n\r\n`,
    );
    socket.write(framing === 'length' ? piece : Buffer.concat([Buffer.from('4000\r\n'), piece, Buffer.from('\r\n')]));
    sentBytes += piece.length;
  });
  return { answer, ended, sentBytes: () => sentBytes };
}

describe('a request without the token is refused before its body is read', () => {
  const cases: Array<[string, string, string, 'length' | 'chunked']> = [
    ['REST retain, no token', '/v1/acme/banks/b/memories', '', 'length'],
    [
      'REST retain, a wrong token',
      '/v1/acme/banks/b/memories',
      'Authorization: Bearer not-the-token-at-all\r\n',
      'length',
    ],
    ['REST retain, a chunked body and no token', '/v1/acme/banks/b/memories', '', 'chunked'],
    ['MCP /mcp, no token', '/mcp', '', 'length'],
    ['MCP /v1/{tenant}/mcp/{bank}, a wrong token', '/v1/acme/mcp/b', `Authorization: Bearer x${TOKEN}\r\n`, 'length'],
  ];
  for (const [name, path, headers, framing] of cases) {
    it(`${name}: 401, Connection: close, and the engine closes while the body is still unsent`, async () => {
      const upload = partialUpload(path, headers, framing);
      const { head, body } = await upload.answer;
      assert.match(head, /^HTTP\/1\.1 401 /);
      assert.match(head, /\r\nwww-authenticate: Bearer/i);
      assert.equal((JSON.parse(body) as { code: string }).code, 'unauthorized');
      assert.match(head, /\r\nconnection: close(\r\n|$)/i);
      await upload.ended;
      assert.equal(upload.sentBytes(), 16 * 1024, 'the server closed with the body still unsent');
    });
  }

  it('with the token, the same engine takes the body and answers on a kept-alive connection', async () => {
    const r = await call(
      engine.url,
      'POST',
      '/v1/acme/banks/b/memories',
      { content: 'Ada brought the blue kettle.' },
      { authorization: `Bearer ${TOKEN}` },
    );
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.notEqual(r.headers.get('connection'), 'close');
  });
});
