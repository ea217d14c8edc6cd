// An engine process on an external database (PGlite served over the wire) under a steady write, recall and list load
// while the database server drops every connection and comes back, twice: the engine never exits, every request during
// the outage answers 200 or 503 database_unavailable (problem+json, Retry-After), never a 500; it recovers by itself;
// the TypeScript client's retain sent during the outage succeeds by retrying; and every id acknowledged with a 200 is
// in the database afterwards.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { Mnemos } from '@mnemos/client';
import { call, tempHome, testEnv, type JsonAnswer } from './helpers/engine.js';
import { memoryPglite } from './helpers/memory-pglite.js';
import { waitFor } from './helpers/postgres-server.js';
import { spawnEngine, type EngineProcess } from './helpers/process.js';
import { serveOverTheWire, type WirePostgres } from './helpers/wire-postgres.js';

const BANK = 'outage';
/** Generous: on a loaded 2-core machine a retain (embedding included) can take seconds. */
const LIMIT_MS = 120_000;

let pg: PGlite;
let server: WirePostgres;
let engine: EngineProcess;
const home = tempHome();

before(async () => {
  pg = await memoryPglite({ extensions: { vector } });
  server = await serveOverTheWire(pg, 40);
  engine = await spawnEngine(
    testEnv(home.path, {
      MNEMOS_API_DATABASE_URL: server.url,
      // pglite-socket runs every connection on PGlite's one backend, where the extended-protocol messages of concurrent
      // connections can interleave outside a transaction; one pooled connection keeps the load itself correct, so that
      // any failure seen here comes from the outage.
      MNEMOS_API_DATABASE_POOL_SIZE: '1',
      MNEMOS_API_LOG_LEVEL: 'warn',
    }),
  );
});

after(async () => {
  await engine?.stop();
  await server?.stop();
  await pg?.close();
  home.remove();
});

/** What the load saw: acknowledged ids, 503s per operation, and anything else (which must stay empty). */
const seen = {
  acked: new Set<string>(),
  unavailable: { retain: 0, recall: 0, list: 0 },
  answered: { recall: 0, list: 0 },
  wrong: [] as string[],
};
type Operation = keyof typeof seen.unavailable;
let loadRunning = true;

/** Records an answer; a 503 must be the database_unavailable problem with Retry-After. */
function note(operation: Operation, answer: JsonAnswer): void {
  if (answer.status === 200) {
    if (operation === 'retain') for (const id of answer.body['memory_ids'] as string[]) seen.acked.add(id);
    else seen.answered[operation]++;
    return;
  }
  const body = answer.body;
  const wellFormed =
    answer.status === 503 &&
    body['code'] === 'database_unavailable' &&
    body['status'] === 503 &&
    typeof body['type'] === 'string' &&
    typeof body['title'] === 'string' &&
    typeof body['detail'] === 'string' &&
    !body['detail'].includes('\n') &&
    /retry/i.test(body['detail']) &&
    answer.headers.get('content-type')?.startsWith('application/problem+json') === true &&
    Number(answer.headers.get('retry-after')) > 0;
  if (wellFormed) seen.unavailable[operation]++;
  else {
    const retryAfter = answer.headers.get('retry-after');
    seen.wrong.push(`${operation}: ${answer.status} ${JSON.stringify(body)} retry-after=${retryAfter}`);
  }
}

async function writer(id: number): Promise<void> {
  for (let n = 0; loadRunning; n++) {
    const content = `Outage log ${id}-${n}: the keeper of lighthouse ${id} noted wind force ${n % 12} at dawn.`;
    const answer = await call(engine.url, 'POST', `/v1/default/banks/${BANK}/memories`, { content }).catch(
      (e: unknown) => {
        seen.wrong.push(`retain: request failed (${String(e)})`);
        return undefined;
      },
    );
    if (answer) note('retain', answer);
    // Paces the loop while answers come back at once (during the outage); not a timing assumption.
    if (answer?.status !== 200) await new Promise((r) => setTimeout(r, 20));
  }
}

/** Recalls and lists in turn: the semantic path and a plain data route. */
async function reader(): Promise<void> {
  for (let n = 0; loadRunning; n++) {
    const operation: Operation = n % 2 === 0 ? 'recall' : 'list';
    const request =
      operation === 'recall'
        ? call(engine.url, 'POST', `/v1/default/banks/${BANK}/memories/recall`, { query: 'wind force at dawn' })
        : call(engine.url, 'GET', `/v1/default/banks/${BANK}/memories?limit=5`);
    const answer = await request.catch((e: unknown) => {
      seen.wrong.push(`${operation}: request failed (${String(e)})`);
      return undefined;
    });
    if (answer) note(operation, answer);
    if (answer?.status !== 200) await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Drops every connection (`whileDown` starts with it), waits until retains and recalls have met the outage and
 * `downUntil` holds, then serves again.
 */
async function outage(whileDown: () => void = () => undefined, downUntil: () => boolean = () => true): Promise<void> {
  const before = { ...seen.unavailable };
  const stopping = server.stop();
  whileDown();
  await stopping;
  await waitFor(
    'retains, recalls and lists to meet the outage',
    () =>
      seen.unavailable.retain >= before.retain + 3 &&
      seen.unavailable.recall >= before.recall + 1 &&
      seen.unavailable.list >= before.list + 1 &&
      downUntil(),
    LIMIT_MS,
  );
  await server.resume();
}

async function moreAcknowledged(count: number): Promise<void> {
  const target = seen.acked.size + count;
  await waitFor(`${count} more acknowledged retains`, () => seen.acked.size >= target, LIMIT_MS);
}

describe('an engine outlives its database', { timeout: 600_000 }, () => {
  it('answers 503 database_unavailable in outages, recovers by itself, and loses no acknowledged write', async () => {
    const load = Promise.all([writer(1), writer(2), writer(3), reader()]);
    await moreAcknowledged(10);

    // The TypeScript client retries the 503 (honouring Retry-After) until the database is back.
    const clientStatuses: number[] = [];
    const client = new Mnemos({
      baseUrl: engine.url,
      maxRetries: 60,
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        clientStatuses.push(response.status);
        return response;
      },
    });
    let retainedThroughOutage: ReturnType<typeof client.retain> | undefined;
    await outage(
      () => {
        retainedThroughOutage = client.retain(BANK, 'A note the client sent while the database was down.');
      },
      () => clientStatuses.includes(503),
    );
    await moreAcknowledged(10);
    const clientAnswer = await retainedThroughOutage!;
    assert.equal(clientAnswer.memory_ids.length, 1);
    for (const id of clientAnswer.memory_ids) seen.acked.add(id);

    // A second outage, cut while writes are in flight.
    await outage();
    await moreAcknowledged(10);
    loadRunning = false;
    await load;

    assert.deepEqual(seen.wrong, [], 'every answer was a 200 or a well-formed 503 database_unavailable');
    assert.ok(seen.answered.recall > 0 && seen.answered.list > 0);
    assert.equal(engine.child.exitCode, null, `the engine exited:\n${engine.output()}`);
    assert.equal(engine.child.signalCode, null);
    assert.doesNotMatch(engine.output(), /Unhandled|uncaught/i);
    assert.match(engine.output(), /out of reach/, 'the outage is logged');

    const ids = [...seen.acked];
    const stored = await pg.query<{ n: number }>('SELECT count(*)::int AS n FROM memories WHERE id = ANY($1::uuid[])', [
      ids,
    ]);
    assert.equal(stored.rows[0]?.n, ids.length, 'every acknowledged write is in the database');

    const health = await call(engine.url, 'GET', '/health');
    assert.equal(health.status, 200, JSON.stringify(health.body));
    const recall = await call<{ results: Array<{ id: string; text: string }> }>(
      engine.url,
      'POST',
      `/v1/default/banks/${BANK}/memories/recall`,
      { query: 'the note the client sent while the database was down' },
    );
    assert.equal(recall.status, 200);
    assert.ok(
      recall.body.results.some((r) => r.id === clientAnswer.memory_ids[0]),
      JSON.stringify(recall.body),
    );
  });
});
