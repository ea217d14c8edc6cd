import net from 'node:net';

export interface OversizedUploadResult {
  /** Everything the server sent, as text. */
  received: string;
  /** The socket error the client saw (a reset), if any. */
  error?: string;
}

/**
 * Uploads a body larger than the server accepts the way most HTTP libraries do: the whole body is sent before the
 * answer is read. The rest of the body goes out only after the server has begun to answer, which is the moment a
 * server that closes at once resets the connection, and the client loses the answer it was about to read.
 */
export function uploadOversized(
  url: string,
  path: string,
  bodyBytes: number,
  headers = '',
): Promise<OversizedUploadResult> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    let error: string | undefined;
    let restSent = false;
    socket.on('connect', () => {
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nContent-Type: application/json\r\n${headers}` +
          `Content-Length: ${bodyBytes}\r\n\r\n`,
      );
      socket.write(Buffer.alloc(Math.min(bodyBytes, 16 * 1024), 0x20));
    });
    socket.on('data', (chunk) => {
      chunks.push(chunk);
      if (restSent) return;
      restSent = true;
      socket.write(Buffer.alloc(bodyBytes - Math.min(bodyBytes, 16 * 1024), 0x20));
    });
    socket.on('error', (e) => {
      error = (e as NodeJS.ErrnoException).code ?? e.message;
    });
    socket.on('close', () => resolve({ received: Buffer.concat(chunks).toString('utf8'), error }));
  });
}
