import { resourceLimits } from 'node:worker_threads';
import { serveThread, threadData, transferred } from '../../src/util/thread.js';

/** A thread for the tests of util/thread.ts: it opens after `openAfterMs`, or fails to open when told to. */
async function open(emit: (event: string) => void) {
  const { failToOpen, openAfterMs } = threadData() as { failToOpen: boolean; openAfterMs: number };
  emit('opening');
  await new Promise((resolve) => setTimeout(resolve, openAfterMs));
  if (failToOpen) throw new Error('the sample thread could not open');
  return {
    double: (n: number) => 2 * n,
    /** The limits of this thread's JavaScript heap, as the thread sees them. */
    limits: () => ({ ...resourceLimits }),
    /** Answers with the bytes it was sent, reversed, moving the buffer back rather than copying it. */
    reverse(bytes: Uint8Array) {
      const out = Uint8Array.from(bytes).reverse();
      return transferred(out, [out.buffer]);
    },
    fail(): never {
      throw Object.assign(new Error('duplicate key'), { code: '23505', detail: 'Key (n)=(1) already exists.' });
    },
    /** Never answers: the thread stops while the call waits. */
    stop(): Promise<never> {
      setTimeout(() => process.exit(3), 10);
      return new Promise<never>(() => undefined);
    },
  };
}

export type SampleThread = Awaited<ReturnType<typeof open>>;

serveThread(open);
