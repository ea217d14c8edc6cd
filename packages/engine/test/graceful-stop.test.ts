import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { RouteExtender } from '../src/index.js';
import { call, startTestEngine } from './helpers/engine.js';

describe('stopping the engine', () => {
  it('lets a request in flight finish, refuses new ones, then closes the database and releases its lock', async () => {
    // A route that answers only when the test says so: a request provably in flight when the stop begins.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let arrived!: () => void;
    const inFlight = new Promise<void>((resolve) => (arrived = resolve));
    const slowRoute: RouteExtender = (app) => {
      app.get('/test/slow', async () => {
        arrived();
        await released;
        return { finished: true };
      });
    };
    const engine = await startTestEngine({}, { extensions: [slowRoute] });
    try {
      const slow = call(engine.url, 'GET', '/test/slow');
      await inFlight;
      let closed = false;
      const closing = engine.close(60_000).then(() => (closed = true));

      // New requests are not served once the stop has begun (refused, or 503 on a connection still open).
      const late = await call(engine.url, 'GET', '/health').then(
        (r) => r.status,
        () => 'refused',
      );
      assert.ok(late === 'refused' || late === 503, `a request after the stop began got ${late}`);
      assert.equal(closed, false, 'the stop waits for the request in flight');

      release();
      const answer = await slow;
      assert.equal(answer.status, 200);
      assert.deepEqual(answer.body, { finished: true });
      await closing;
      assert.equal(existsSync(join(engine.home, 'db.lock')), false, 'the database lock is released');
    } finally {
      release();
      await engine.dispose().catch(() => undefined);
    }
  });
});
