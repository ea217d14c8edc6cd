import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { JsonClient } from '../bench/http-json.js';
import { mixedArrivals, poissonArrivals, runOpenLoop, searchCapacity } from '../bench/open-loop.js';
import { rng } from '../bench/synthetic.js';

test('Poisson arrivals from a seeded generator have the offered mean rate and exponential gaps', () => {
  const rate = 50;
  const seconds = 400;
  const times = poissonArrivals(rate, seconds, rng(7));
  assert.deepEqual(poissonArrivals(rate, seconds, rng(7)), times, 'the same seed gives the same schedule');
  assert.ok(Math.abs(times.length / seconds - rate) / rate < 0.03, `${times.length / seconds} requests/s`);
  assert.ok(times.every((t, i) => t >= 0 && t < seconds * 1000 && (i === 0 || t >= times[i - 1]!)));
  const gaps = times.slice(1).map((t, i) => t - times[i]!);
  const mean = gaps.reduce((a, b) => a + b, 0) / gaps.length;
  const sd = Math.sqrt(gaps.reduce((a, g) => a + (g - mean) ** 2, 0) / gaps.length);
  assert.ok(Math.abs(mean - 1000 / rate) < 1, `mean gap ${mean} ms`);
  // An exponential distribution's standard deviation equals its mean; evenly spaced arrivals would give 0.
  assert.ok(Math.abs(sd / mean - 1) < 0.05, `coefficient of variation ${sd / mean}`);
});

test('the mix draws retains at the given share', () => {
  const arrivals = mixedArrivals(100, 100, 0.2, rng(1), rng(2));
  const share = arrivals.filter((a) => a.op === 'retain').length / arrivals.length;
  assert.ok(Math.abs(share - 0.2) < 0.02, `retain share ${share}`);
  assert.throws(() => poissonArrivals(0, 10, rng(1)), /above 0/);
});

test('the capacity search steps up, then bisects between the last rate that met the bar and the first that did not', async () => {
  const search = await searchCapacity({ start: 20, step: 20, max: 200, rounds: 3 }, (rate) =>
    Promise.resolve(rate <= 73),
  );
  assert.deepEqual(
    search.tried.map((t) => [t.rate, t.met]),
    [
      [20, true],
      [40, true],
      [60, true],
      [80, false],
      [70, true],
      [75, false],
      [72.5, true],
    ],
  );
  assert.equal(search.capacity, 72.5);
  const none = await searchCapacity({ start: 10, step: 10, max: 50, rounds: 2 }, () => Promise.resolve(false));
  assert.equal(none.capacity, 0);
});

/** A server that answers every request after SERVICE_MS and records how many it held at once. */
const SERVICE_MS = 50;
let server: Server;
let url: string;
let open = 0;
let mostOpen = 0;

before(async () => {
  server = createServer((req, res) => {
    open++;
    mostOpen = Math.max(mostOpen, open);
    req.resume();
    setTimeout(() => {
      open--;
      res.setHeader('content-type', 'application/json');
      res.end('{"ok":true}');
    }, SERVICE_MS);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});

after(() => {
  server.close();
});

test('latency counts from the scheduled send time, so waiting for a connection shows in it', async () => {
  const connections = 2;
  const http = new JsonClient(connections);
  // Twelve requests due within 11 ms over two connections: a slow server makes most of them wait.
  const arrivals = Array.from({ length: 12 }, (_, i) => ({ at: i, op: 'recall' as const }));
  try {
    const done = await runOpenLoop(arrivals, connections, () => http.post(url, {}));
    assert.equal(done.length, 12);
    assert.ok(done.every((c) => c.error === undefined && c.result?.status === 200));
    assert.ok(mostOpen <= connections, `the server held ${mostOpen} requests at once`);
    for (const c of done) {
      assert.equal(c.latency, c.queued + (c.finished - c.sent), 'latency is the wait plus the answer time');
      assert.ok(c.finished - c.sent >= SERVICE_MS - 1, 'each answer takes the server its time');
    }
    // Two at a time, each at least SERVICE_MS: the last answer comes at least 6 service times after the start, and
    // all but the first two requests waited at least one service time less the 11 ms their schedule spans.
    const last = Math.max(...done.map((c) => c.latency));
    assert.ok(last >= 6 * SERVICE_MS - 11, `the last latency is ${last} ms`);
    // Measured from the send instead, that wait would be hidden.
    assert.ok(done.filter((c) => c.queued >= SERVICE_MS - 11).length >= 10);
  } finally {
    http.close();
  }
});
