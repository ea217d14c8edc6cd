import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { spawnEngineProcess, type EngineProcess } from '../src/process.js';
import { JsonClient } from './http-json.js';
import { benchModelDir } from './local-model.js';
import { listOption, numberOption, parseBenchCommandLine } from './options.js';
import { testPostgresUrl } from './test-assets.js';
import { startFakeEmbeddingServer, type FakeEmbeddingServer } from '../test/helpers/fake-embeddings.js';

/**
 * `npm run bench:hot-bank`: writers into one bank on one PostgreSQL server (MNEMOS_TEST_PG_URL; a database of its own
 * per run, dropped after). Every write takes the bank's open change number and shares a lock on its `banks` row until
 * commit (migration 014; before it, each took the next number and held the row for itself, so writers into one bank
 * took turns there); this measures how many writes one bank takes and whether its writers wait on a lock.
 *
 * - engines: `--engines 1,4` engine processes on one database, each with `--in-flight` retains of one memory at a
 *   time into the same bank (closed loop, `--seconds` each): retains/s, and how many of the database's connections
 *   waited on a lock, sampled every 100 ms.
 * - database alone: `--sql-writers 1,4` connections, each committing single-memory inserts into the bank through the
 *   table's triggers (change number, statistics, history) as fast as they can, without the model: the rate the bank's
 *   row allows, which is what the engines would meet once their own CPU is not the limit.
 *
 * With `--embeddings api` the engines embed through an OpenAI-compatible API (a local server answering vectors made
 * from the words' hashes at once) instead of the local model: the engines' own CPU then goes to HTTP and the database,
 * as with a hosted embedding service, so what the bank's row allows shows through the engines too.
 *
 * `--sql-triggers-off NAME,..` turns those triggers of `memories` off for the database-alone runs (e.g.
 * `memories_changed`, the change number; `memories_statistics_inserted`, the keyword statistics), to see which of them
 * the writers queue on.
 *
 *   npm run bench:hot-bank -- --engines 1,4 --sql-writers 1,4 --seconds 30
 *   npm run bench:hot-bank -- --engines 1,4 --sql-writers 1 --embeddings api --in-flight 4
 */

const options = parseBenchCommandLine(process.argv.slice(2), {
  engines: 'N1,N2|none (1,4)',
  'in-flight': 'N (per engine, 2)',
  'sql-writers': 'N1,N2 (1,4)',
  seconds: 'N (30)',
  embeddings: 'local|api (local)',
  'sql-triggers-off': 'NAME,..',
  json: 'FILE',
});
const USAGE = options.usage;
const ENGINES = options.values.get('engines') === 'none' ? [] : listOption(options, 'engines', [1, 4]);
const IN_FLIGHT = numberOption(options, 'in-flight', 2);
const SQL_WRITERS = listOption(options, 'sql-writers', [1, 4]);
const SECONDS = numberOption(options, 'seconds', 30);
const BANK = 'hot';
const EMBEDDINGS = options.values.get('embeddings') ?? 'local';
const TRIGGERS_OFF = (options.values.get('sql-triggers-off') ?? '').split(',').filter((t) => /^\w+$/.test(t));
if (EMBEDDINGS !== 'local' && EMBEDDINGS !== 'api')
  throw new Error(`--embeddings ${EMBEDDINGS}: local or api; ${USAGE}`);

/** The engine settings of the embedding model: the local one, or the API answering at `api`. */
function embeddingSettings(api: FakeEmbeddingServer | undefined): Record<string, string> {
  if (api === undefined) return { MNEMOS_API_EMBEDDINGS_LOCAL_MODEL: benchModelDir() };
  return {
    MNEMOS_API_EMBEDDINGS_LOCAL_MODEL: '',
    MNEMOS_API_EMBEDDINGS_LITELLM_MODEL: 'bench-hashes',
    MNEMOS_API_EMBEDDINGS_LITELLM_API_BASE: api.url,
  };
}

interface Run {
  writers: number;
  writes: number;
  per_second: number;
  /** Connections waiting on a lock, averaged over the samples; and the share of samples with any waiting. */
  lock_waiting_mean: number;
  lock_waiting_share: number;
  errors: number;
}

async function scratch<T>(work: (url: string, admin: pg.Client) => Promise<T>): Promise<T> {
  const server = testPostgresUrl();
  const name = `bench_hot_bank_${randomBytes(4).toString('hex')}`;
  const root = new pg.Client({ connectionString: server });
  await root.connect();
  await root.query(`CREATE DATABASE ${name}`);
  const url = new URL(server);
  url.pathname = `/${name}`;
  const admin = new pg.Client({ connectionString: url.toString() });
  await admin.connect();
  try {
    return await work(url.toString(), admin);
  } finally {
    await admin.end();
    await root.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await root.end();
  }
}

/** Samples the database's lock waits every 100 ms until stopped. */
function lockSampler(admin: pg.Client): { stop: () => Promise<{ mean: number; share: number }> } {
  const samples: number[] = [];
  const state = { running: true };
  const loop = (async () => {
    while (state.running) {
      const [row] = (
        await admin.query<{ waiting: number }>(
          `SELECT count(*)::int AS waiting FROM pg_stat_activity
           WHERE datname = current_database() AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'`,
        )
      ).rows;
      samples.push(row?.waiting ?? 0);
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  return {
    async stop() {
      state.running = false;
      await loop;
      const n = Math.max(1, samples.length);
      return { mean: samples.reduce((s, x) => s + x, 0) / n, share: samples.filter((x) => x > 0).length / n };
    },
  };
}

/** A memory's text: distinct for every write, of a retain's usual length. */
function memoryText(writer: string, i: number): string {
  return (
    `Note ${writer}-${i}: the planning meeting for release ${i % 97} moved to ${['Monday', 'Tuesday', 'Friday'][i % 3]}, ` +
    `and ${['Alice', 'Bob', 'Chen', 'Dara'][i % 4]} takes over the migration checklist from the on-call engineer.`
  );
}

async function closedLoop(
  writers: number,
  write: (writer: number, i: number) => Promise<boolean>,
  admin: pg.Client,
): Promise<Run> {
  const deadline = Date.now() + SECONDS * 1000;
  const sampler = lockSampler(admin);
  let writes = 0;
  let errors = 0;
  const start = performance.now();
  const writing = Promise.all(
    Array.from({ length: writers }, async (_, w) => {
      for (let i = 0; Date.now() < deadline; i++) {
        if (await write(w, i)) writes++;
        else errors++;
      }
    }),
  );
  await writing.finally(() => sampler.stop());
  const seconds = (performance.now() - start) / 1000;
  const locks = await sampler.stop();
  return {
    writers,
    writes,
    per_second: writes / seconds,
    lock_waiting_mean: locks.mean,
    lock_waiting_share: locks.share,
    errors,
  };
}

async function engineRun(count: number, api: FakeEmbeddingServer | undefined): Promise<Run> {
  return scratch(async (url, admin) => {
    const home = mkdtempSync(join(tmpdir(), 'mnemos-hot-bank-'));
    const engines: EngineProcess[] = [];
    const http = new JsonClient(count * IN_FLIGHT);
    try {
      for (let e = 0; e < count; e++) {
        engines.push(
          await spawnEngineProcess({
            MNEMOS_HOME: join(home, `engine-${e}`),
            MNEMOS_API_DATABASE_URL: url,
            ...embeddingSettings(api),
            MNEMOS_API_PORT: '0',
            MNEMOS_API_HOST: '127.0.0.1',
            ...options.env,
          }),
        );
      }
      const target = (e: number): string => `${engines[e]!.url}/v1/default/banks/${BANK}/memories`;
      // The model's first run on each engine is not counted.
      for (let e = 0; e < count; e++) await http.post(target(e), { content: memoryText(`warm${e}`, 0) });
      return await closedLoop(
        count * IN_FLIGHT,
        async (w, i) => {
          const answer = await http.post(target(w % count), { content: memoryText(`e${w}`, i) });
          return answer.status < 300;
        },
        admin,
      );
    } finally {
      http.close();
      await Promise.all(engines.map((e) => e.stop()));
      rmSync(home, { recursive: true, force: true });
    }
  });
}

async function sqlRun(writers: number, api: FakeEmbeddingServer | undefined): Promise<Run> {
  return scratch(async (url, admin) => {
    const home = mkdtempSync(join(tmpdir(), 'mnemos-hot-bank-'));
    // One engine start creates the schema (migrations, the vector column), then stops.
    const engine = await spawnEngineProcess({
      MNEMOS_HOME: home,
      MNEMOS_API_DATABASE_URL: url,
      ...embeddingSettings(api),
      MNEMOS_API_PORT: '0',
      MNEMOS_API_HOST: '127.0.0.1',
    });
    await engine.stop();
    rmSync(home, { recursive: true, force: true });
    const clients = await Promise.all(
      Array.from({ length: writers }, async () => {
        const c = new pg.Client({ connectionString: url });
        await c.connect();
        return c;
      }),
    );
    const [dimension] = (
      await admin.query<{ d: number }>(
        "SELECT atttypmod AS d FROM pg_attribute WHERE attrelid = 'memories'::regclass AND attname = 'embedding'",
      )
    ).rows;
    // The bank exists before the first write (the change-number trigger, which creates it, may be off).
    await admin.query(`INSERT INTO banks (tenant, bank_id, name) VALUES ('default', $1, $1)`, [BANK]);
    for (const trigger of TRIGGERS_OFF) await admin.query(`ALTER TABLE memories DISABLE TRIGGER ${trigger}`);
    const vector = `[${Array.from({ length: dimension?.d ?? 384 }, (_, i) => ((i % 7) - 3) / 10).join(',')}]`;
    try {
      return await closedLoop(
        writers,
        async (w, i) => {
          const c = clients[w]!;
          const text = memoryText(`s${w}`, i);
          await c.query('BEGIN');
          await c.query(
            `INSERT INTO memories (id, tenant, bank_id, space, type, text, fts, content_hash, embedding)
             VALUES (gen_random_uuid(), 'default', $1, 'default', 'world', $2, to_tsvector('english', $2), md5($2), $3)`,
            [BANK, text, vector],
          );
          await c.query('COMMIT');
          return true;
        },
        admin,
      );
    } finally {
      await Promise.all(clients.map((c) => c.end()));
    }
  });
}

async function main(): Promise<void> {
  const out: Record<string, unknown> = {
    seconds: SECONDS,
    in_flight_per_engine: IN_FLIGHT,
    embeddings: EMBEDDINGS,
    sql_triggers_off: TRIGGERS_OFF,
  };
  const api = EMBEDDINGS === 'api' ? await startFakeEmbeddingServer(384) : undefined;
  const show = (what: string, r: Run): void =>
    console.log(
      `${what}: ${r.per_second.toFixed(1)} writes/s (${r.writes} in ${SECONDS} s, ${r.errors} errors), ` +
        `connections waiting on a lock: mean ${r.lock_waiting_mean.toFixed(2)}, in ${(100 * r.lock_waiting_share).toFixed(0)}% of samples`,
    );
  const sql: Run[] = [];
  for (const n of SQL_WRITERS) {
    sql.push(await sqlRun(n, api));
    show(`database alone, ${n} writer(s)`, sql.at(-1)!);
  }
  const engines: Run[] = [];
  for (const n of ENGINES) {
    const run = await engineRun(n, api);
    engines.push({ ...run, writers: n });
    show(`${n} engine(s), ${IN_FLIGHT} retains in flight each`, run);
  }
  await api?.close();
  out.database_alone = sql;
  out.engines = engines;
  const json = options.values.get('json');
  if (json !== undefined) writeFileSync(json, `${JSON.stringify(out, null, 2)}\n`);
}

await main();
