import pg from 'pg';

/** First and longest wait between attempts to restore a lost LISTEN connection. */
const RETRY_FIRST_MS = 500;
const RETRY_MAX_MS = 30_000;

/**
 * One dedicated connection (outside the pool: a pooled connection is shared, and LISTEN belongs to the session) that
 * LISTENs on a channel and calls `onNotify` for each NOTIFY. A lost connection is restored with backoff; each time
 * listening (re)starts `onNotify` is called once, because notifications sent while nobody listened are gone.
 */
export class NotificationListener {
  private closed = false;

  /** Read through a call: `close()` sets the flag while the loop awaits, which the type checker cannot see. */
  private isClosed(): boolean {
    return this.closed;
  }
  private client: pg.Client | undefined;
  private cancelWait: (() => void) | undefined;
  private readonly running: Promise<void>;

  constructor(
    private readonly config: pg.ClientConfig,
    private readonly channel: string,
    private readonly onNotify: () => void,
  ) {
    if (!/^[a-z_][a-z0-9_]*$/.test(channel)) {
      throw new Error(`invalid notification channel name ${JSON.stringify(channel)}`);
    }
    this.running = this.run();
  }

  private async run(): Promise<void> {
    let delay = RETRY_FIRST_MS;
    while (!this.closed) {
      const client = new pg.Client(this.config);
      this.client = client;
      // The listener on 'error' is what keeps a dropped connection from crashing the process.
      const lost = new Promise<void>((resolve) => {
        client.on('error', () => resolve());
        client.on('end', () => resolve());
      });
      try {
        await client.connect();
        await client.query(`LISTEN ${this.channel}`);
        client.on('notification', () => this.onNotify());
        delay = RETRY_FIRST_MS;
        if (!this.isClosed()) this.onNotify();
        await lost;
      } catch {
        // Unreachable for now: wait and try again.
      }
      this.client = undefined;
      await client.end().catch(() => undefined);
      if (this.isClosed()) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delay);
        timer.unref();
        this.cancelWait = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      delay = Math.min(delay * 2, RETRY_MAX_MS);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.cancelWait?.();
    await this.client?.end().catch(() => undefined);
    await this.running;
  }
}
