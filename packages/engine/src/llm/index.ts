import type { Engine } from '../engine.js';
import { installJobQueue } from '../jobs/index.js';
import { reflect } from '../reflect/reflect.js';
import { createProvider, LlmClient } from './client.js';
import { extractionHandler } from './extract.js';
import { LlmTransport } from './transport.js';

export { LlmClient, createProvider } from './client.js';
export { LlmError, type Usage, ZERO_USAGE } from './types.js';

/**
 * Switches on the optional background and LLM layers. The job queue is always installed (async retain needs it);
 * with an LLM configured, every retain also enqueues fact extraction (in the retain's own transaction) and reflect
 * answers through the model.
 */
export async function installLlmLayer(engine: Engine): Promise<void> {
  const queue = await installJobQueue(engine);
  const config = engine.config.llm;
  if (!config) return;
  let client: LlmClient | undefined;
  // The transport thread holds the cap of calls in flight; the client admits as many again, prepared and queued in the
  // thread, so a freed slot is taken the moment it frees. Closed last (closers run in reverse), after the job queue.
  const transport = new LlmTransport(config.concurrency);
  engine.closers.unshift(() => transport.close());
  const provider = createProvider(config, (reason, delayMs) => {
    client?.noteRetry();
    engine.log.info(`LLM call retried in ${Math.round(delayMs)} ms (${reason})`);
  }, transport);
  client = new LlmClient(provider, config.concurrency * 2, engine.metrics.registry);
  const llm = client;
  queue.register('extract', extractionHandler(engine, llm));
  engine.afterRetainHooks.push(async (tx, partition, ids, run) => {
    const jobs = ids.map((id) => ({ kind: 'extract', memoryId: id }) as const);
    await queue.enqueue(tx, run.operationId(), partition, 'extract', jobs, ids.length);
    // The jobs become visible when the retain commits; the nudge saves the idle poll.
    setImmediate(() => queue.wake());
  });
  engine.reflector = (tenant, bankId, body) => reflect(engine, llm, tenant, bankId, body);
  engine.log.info(`LLM ${config.provider} ${config.model} ready (fact extraction and reflect, ${config.concurrency} at once)`);
}
