import { createWriteStream } from 'node:fs';
import { stat, unlink } from 'node:fs/promises';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { PRIVATE_FILE } from '../util/private-files.js';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { setTimeout as sleep } from 'node:timers/promises';

export interface ResumableDownloadOptions {
  /** Bytes in the partial file so far, the file's full size (undefined if not announced), and this run's bytes. */
  onBytes?: (loaded: number, total: number | undefined, received: number) => void;
  /** Tries within this call; the partial file also survives the process, so the next start continues it. */
  attempts?: number;
}

/** The server answered, but with something no retry can fix (a 4xx status, a file larger than announced). */
export class DownloadRefusedError extends Error {
  override readonly name = 'DownloadRefusedError';
}

/**
 * Downloads `url` into `partPath`, continuing a partial file left by an earlier try (HTTP Range). Resolves with the
 * file's size once `partPath` holds exactly the bytes the server announced; a connection cut half-way is retried from
 * where it stopped. The caller verifies the content and renames the file into place, so a partial file is never taken
 * for the real one.
 */
export async function downloadResumable(
  url: string,
  partPath: string,
  options: ResumableDownloadOptions = {},
): Promise<number> {
  const attempts = options.attempts ?? 3;
  let lastError: unknown;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    try {
      return await downloadOnce(url, partPath, options.onBytes);
    } catch (error) {
      if (error instanceof DownloadRefusedError) throw error;
      lastError = error;
      if (attempt < attempts) await sleep(250 * attempt);
    }
  }
  throw lastError;
}

async function downloadOnce(
  url: string,
  partPath: string,
  onBytes: ResumableDownloadOptions['onBytes'],
): Promise<number> {
  const have = await sizeOf(partPath);
  const response = await fetch(url, { headers: have > 0 ? { range: `bytes=${have}-` } : {} });
  const span = responseSpan(response, have);
  if (span === 'restart') {
    // The server cannot continue the partial file where it ends (416, or another range): the next try starts over.
    await response.body?.cancel();
    await unlink(partPath);
    throw new Error(`the server could not continue the partial download at byte ${have}`);
  }
  if (span === undefined) {
    await response.body?.cancel();
    const status = `${response.status} ${response.statusText}`.trim();
    const message = `the server answered ${status}`;
    throw response.status >= 400 && response.status < 500 ? new DownloadRefusedError(message) : new Error(message);
  }
  if (!response.body) throw new Error('the server sent no body');
  let received = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      received += chunk.length;
      const loaded = span.start + received;
      if (span.total !== undefined && loaded > span.total) {
        done(new DownloadRefusedError(`the server sent more than the ${span.total} bytes it announced`));
        return;
      }
      onBytes?.(loaded, span.total, received);
      done(null, chunk);
    },
  });
  const body = Readable.fromWeb(response.body as NodeReadableStream<Uint8Array>);
  await pipeline(
    body,
    counter,
    createWriteStream(partPath, { flags: span.start === 0 ? 'w' : 'a', mode: PRIVATE_FILE }),
  );
  const size = span.start + received;
  if (span.total !== undefined && size !== span.total) {
    throw new Error(`the connection ended after ${size} of ${span.total} bytes`);
  }
  return size;
}

/**
 * Where the body starts in the file and the file's full size: 206 continues at `have` (Content-Range), 200 starts
 * from byte 0 (a server without Range support), 'restart' when the server cannot continue at `have`. Undefined for
 * any other status.
 */
function responseSpan(
  response: Response,
  have: number,
): { start: number; total: number | undefined } | 'restart' | undefined {
  if (response.status === 416) return 'restart';
  if (response.status === 206) {
    const match = /^bytes (\d+)-\d+\/(\d+|\*)$/.exec(response.headers.get('content-range') ?? '');
    if (!match || Number(match[1]) !== have) return 'restart';
    return { start: have, total: match[2] === '*' ? undefined : Number(match[2]) };
  }
  if (response.status === 200) {
    const length = response.headers.get('content-length');
    return { start: 0, total: length === null ? undefined : Number(length) };
  }
  return undefined;
}

async function sizeOf(path: string): Promise<number> {
  try {
    return (await stat(path)).size;
  } catch {
    return 0;
  }
}
