/** Where a CLI command reads and writes: the process by default, buffers in tests. */
export interface CliIo {
  env: Record<string, string | undefined>;
  stdout(text: string): void;
  stderr(text: string): void;
  /** Reads all of standard input (for `mnemos retain <bank> -`). */
  readStdin(): Promise<string>;
  /** Standard input as it arrives (for `mnemos import`, whose input may be larger than memory); else readStdin. */
  stdinText?: () => AsyncIterable<string>;
  /** Terminal width for tables (undefined when not a terminal). */
  columns: number | undefined;
}

export function processIo(): CliIo {
  return {
    env: process.env,
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    readStdin: async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
      return Buffer.concat(chunks).toString('utf8');
    },
    stdinText: async function* () {
      process.stdin.setEncoding('utf8');
      for await (const chunk of process.stdin) yield String(chunk);
    },
    columns: process.stdout.isTTY ? process.stdout.columns : undefined,
  };
}

/** A mistake in the command line: printed with a hint, exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}
