import type { EngineConfig } from '../config/load.js';
import type { Logger } from '../log.js';
import type { EngineMetrics } from '../metrics.js';
import { createProvider, LlmClient } from './client.js';
import { LlmTransport } from './transport.js';

export { LlmClient } from './client.js';

export interface OpenedLlm {
  client: LlmClient;
  /** Closes the transport thread; call it after the job queue has stopped. */
  close(): Promise<void>;
}

/** The configured LLM (fact extraction and reflect), or undefined when none is configured. */
export function openLlm(config: EngineConfig, log: Logger, metrics: EngineMetrics): OpenedLlm | undefined {
  const llm = config.llm;
  if (!llm) return undefined;
  let client: LlmClient | undefined;
  // The transport thread holds the cap of calls in flight; the client admits as many again, prepared and queued in the
  // thread, so a freed slot is taken the moment it frees.
  const transport = new LlmTransport(llm.concurrency);
  const provider = createProvider(
    llm,
    (reason, delayMs) => {
      client?.noteRetry();
      log.info(`LLM call retried in ${Math.round(delayMs)} ms (${reason})`);
    },
    transport,
  );
  client = new LlmClient(provider, llm.concurrency * 2, metrics.registry);
  log.info(`LLM ${llm.provider} ${llm.model} ready (fact extraction and reflect, ${llm.concurrency} at once)`);
  return { client, close: () => transport.close() };
}
