import { createReadStream, readFileSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

export interface FakeHubOptions {
  /** Cut the connection half-way through this file (a path such as onnx/model_quantized.onnx). */
  cut?: { file: string; times: number };
  /** Serve this file with every byte after the first kilobyte flipped (same length: only loading it can tell). */
  corrupt?: string;
  /** Send half of what is left of this file, then wait for `until` before sending the rest. */
  hold?: { file: string; until: Promise<void> };
}

export interface FakeHub {
  url: string;
  /** Every request: the file asked for and its Range header. */
  requests: Array<{ file: string; range: string | undefined }>;
  close(): Promise<void>;
}

/**
 * A stand-in for the Hugging Face hub over real HTTP: serves a local model folder at `/<org>/<name>/resolve/main/
 * <file>` with content-length and byte ranges, and can cut a transfer half-way or serve a damaged file.
 */
export async function startFakeHub(modelDir: string, options: FakeHubOptions = {}): Promise<FakeHub> {
  const requests: FakeHub['requests'] = [];
  let cutsLeft = options.cut?.times ?? 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const match = /^\/[^/]+\/[^/]+\/resolve\/main\/(.+)$/.exec(req.url ?? '');
    const file = match?.[1];
    requests.push({ file: file ?? req.url ?? '', range: req.headers.range });
    let size: number;
    try {
      size = file === undefined ? -1 : statSync(join(modelDir, file)).size;
    } catch {
      size = -1;
    }
    if (file === undefined || size < 0) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Entry not found');
      return;
    }
    const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    const start = range ? Number(range[1]) : 0;
    if (start >= size) {
      res.writeHead(416, { 'content-range': `bytes */${size}` }).end();
      return;
    }
    const headers = { 'content-type': 'application/octet-stream', 'content-length': String(size - start) };
    if (range) res.writeHead(206, { ...headers, 'content-range': `bytes ${start}-${size - 1}/${size}` });
    else res.writeHead(200, headers);
    if (file === options.corrupt) {
      const bytes = readFileSync(join(modelDir, file));
      for (let i = 1024; i < bytes.length; i++) bytes[i] = bytes[i]! ^ 0xff;
      res.end(bytes.subarray(start));
      return;
    }
    if (file === options.cut?.file && cutsLeft > 0) {
      cutsLeft--;
      // Half of what is left, then the connection drops without finishing the body.
      const half = start + Math.floor((size - start) / 2);
      const stream = createReadStream(join(modelDir, file), { start, end: half - 1 });
      stream.on('end', () => res.socket?.destroy());
      stream.pipe(res, { end: false });
      return;
    }
    if (file === options.hold?.file) {
      const half = start + Math.floor((size - start) / 2);
      const first = createReadStream(join(modelDir, file), { start, end: half - 1 });
      first.on('end', () => {
        void options.hold!.until.then(() => createReadStream(join(modelDir, file), { start: half }).pipe(res));
      });
      first.pipe(res, { end: false });
      return;
    }
    createReadStream(join(modelDir, file), { start }).pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
