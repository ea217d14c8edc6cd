import { randomUUID } from 'node:crypto';
import { startEngine } from '../src/index.js';
import type { RouteExtender } from '../src/http/app.js';
import type { RecallQuery, RecallResult, RetainRequest, RetainResult } from '../src/service/types.js';

/**
 * The floor of `npm run bench:load -- --floor`: the engine's own HTTP app (the same Fastify setup, hooks, input layer,
 * validation, answer shaping and serialisation) and its own model and batcher, with the engine's work taken out. It
 * starts as `mnemos serve` does; until `POST /bench/floor` it is a real engine, so the bench stores a few memories and
 * recalls once to capture answers of the real shape. From then on a recall answers that captured result as soon as
 * its query is embedded, and a retain answers with a fresh id as soon as its texts are embedded: no database, no
 * search. What such a server spends per request is what any HTTP service with this model pays on top of the model.
 *
 * Run by bench/load.ts in its own process (spawnEngineProcess). Settings come from the environment (MNEMOS_*), as for
 * the engine.
 */

let captured: RecallResult | undefined;

const floorSwitch: RouteExtender = (app, engine) => {
  const service = engine.service;
  const recall = service.recall.bind(service);
  service.recall = async (q: RecallQuery) => (captured = await recall(q));
  app.post('/bench/floor', async (_request, reply) => {
    const answer = captured;
    if (answer === undefined) return reply.code(409).send({ detail: 'recall once before the switch' });
    service.recall = async (q: RecallQuery): Promise<RecallResult> => {
      await engine.embedder.embed([q.query], 'query');
      return answer;
    };
    service.retain = async (request: RetainRequest): Promise<RetainResult> => {
      await engine.embedder.embed(
        request.items.map((item) => item.content),
        'document',
      );
      const ids = request.items.map(() => randomUUID());
      return {
        async: false,
        itemsCount: request.items.length,
        memoryIds: ids,
        storedCount: ids.length,
        operationId: undefined,
        items: ids.map((id) => ({ memoryIds: [id], storedCount: 1 })),
      };
    };
    return { floor: true, recall_results: answer.hits.length };
  });
};

// The line spawnEngineProcess (src/process.ts) waits for, as `mnemos serve` prints it.
const running = await startEngine({
  extensions: [floorSwitch],
  onListening: (url) => console.log(`engine listening on ${url} (the floor)`),
});
const stop = () => {
  running.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
