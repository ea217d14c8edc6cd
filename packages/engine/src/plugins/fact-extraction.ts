import { extractionHandler } from '../llm/extract.js';
import { NOTHING_TO_CLOSE, type EnginePlugin } from './types.js';

/** With an LLM, every retain enqueues fact extraction for its new memories, in the retain's own transaction. */
export const factExtractionPlugin: EnginePlugin = {
  name: 'fact-extraction',
  install(engine) {
    const { llm, queue } = engine;
    if (!llm) return undefined;
    queue.register('extract', extractionHandler(engine, llm));
    return {
      hooks: {
        afterRetain: async (tx, partition, ids, run) => {
          const jobs = ids.map((id) => ({ kind: 'extract', memoryId: id }));
          await queue.enqueue(tx, run.operationId(), partition, 'extract', jobs, ids.length);
          // The jobs become visible when the retain commits; the nudge saves the idle poll.
          setImmediate(() => queue.wake());
        },
      },
      close: NOTHING_TO_CLOSE,
    };
  },
};
