import { addBankUsage } from '../memory/bank-store.js';
import { reflect } from '../reflect/reflect.js';
import { NOTHING_TO_CLOSE, type EnginePlugin } from './types.js';

/** With an LLM, reflect answers a question from the bank's memories, citing them. */
export const reflectPlugin: EnginePlugin = {
  name: 'reflect',
  install(engine) {
    const { llm } = engine;
    if (!llm) return undefined;
    const parts = {
      llm,
      recall: engine.recall.bind(engine),
      answered: () => engine.metrics.operations.inc({ operation: 'reflect' }),
      async recordUsage(tenant: string, bankId: string, usage: { input_tokens: number; output_tokens: number }) {
        if (usage.input_tokens + usage.output_tokens === 0) return;
        await addBankUsage(engine.db, tenant, bankId, usage.input_tokens, usage.output_tokens).catch(() => undefined);
      },
    };
    return { hooks: { reflect: (request, stream) => reflect(parts, request, stream) }, close: NOTHING_TO_CLOSE };
  },
};
