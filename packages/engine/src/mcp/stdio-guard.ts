import { Transform, type TransformCallback } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { isJsonRpcMessage, paramsProblem } from './request-check.js';
import { errorMessage } from '../util/error-message.js';

/** JSON-RPC 2.0 error codes for messages the server cannot take. */
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const INVALID_PARAMS = -32602;

/**
 * Stands between standard input and the SDK's stdio transport, which drops a line that is not JSON-RPC without an answer
 * and answers params that do not fit their method as its own internal error. Lines the server can take pass through
 * unchanged; for the others the guard writes the JSON-RPC error a caller can act on (what is wrong, where) to `answer`,
 * the same stream the transport writes its answers to, a whole line at a time.
 */
export function stdioGuard(answer: (line: string) => void): Transform {
  let pending = '';
  const refuse = (id: unknown, code: number, message: string, data?: Record<string, unknown>) => {
    const error = data === undefined ? { code, message } : { code, message, data };
    answer(`${JSON.stringify({ jsonrpc: '2.0', id: validId(id) ? id : null, error })}\n`);
  };
  const take = (line: string, pass: (line: string) => void) => {
    if (line.trim() === '') return;
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch (error) {
      refuse(null, PARSE_ERROR, `Parse error: ${errorMessage(error)}`);
      return;
    }
    if (!isJsonRpcMessage(message)) {
      const id = typeof message === 'object' && message !== null ? (message as Record<string, unknown>)['id'] : null;
      refuse(id, INVALID_REQUEST, 'Invalid Request: send a JSON-RPC 2.0 object with "jsonrpc": "2.0" and a "method"');
      return;
    }
    const problem = paramsProblem(message);
    if (problem !== undefined) {
      const pointer = problem.pointer || '/';
      refuse(
        (message as Record<string, unknown>)['id'],
        INVALID_PARAMS,
        `Invalid params: ${pointer}: ${problem.detail}`,
        {
          pointer,
        },
      );
      return;
    }
    pass(`${line}\n`);
  };
  // A chunk can end inside a character; the decoder keeps its first bytes for the next chunk.
  const decoder = new StringDecoder('utf8');
  return new Transform({
    transform(chunk: Buffer, _encoding, done: TransformCallback) {
      const text = decoder.write(chunk);
      // Only the new text is searched for line ends, so a long line arriving in many chunks is not scanned again each time.
      if (!text.includes('\n')) {
        pending += text;
        done();
        return;
      }
      const lines = (pending + text).split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) take(line.replace(/\r$/, ''), (l) => this.push(l));
      done();
    },
    flush(done: TransformCallback) {
      take(pending + decoder.end(), (l) => this.push(l));
      done();
    },
  });
}

const validId = (id: unknown): boolean => typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id));
