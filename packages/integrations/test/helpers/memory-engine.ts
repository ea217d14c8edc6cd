import { Mnemos } from '@mnemos/client';
import { startTestEngine, type TestEngine } from '../../../engine/test/helpers/engine.js';
import { startFakeLlm, type FakeLlm } from '../../../engine/test/helpers/fake-llm.js';

/** A real engine whose LLM is the stand-in server, which also plays the agent's own model in these tests. */
export interface MemoryEngine {
  engine: TestEngine;
  llm: FakeLlm;
  client: Mnemos;
  /** The agent model's next answer is this text. */
  say(text: string): void;
  /** The agent model's next answer calls this tool. */
  callTool(name: string, args: Record<string, unknown>): void;
  stop(): Promise<void>;
}

export async function startMemoryEngine(): Promise<MemoryEngine> {
  const llm = await startFakeLlm();
  const engine = await startTestEngine({
    MNEMOS_API_LLM_PROVIDER: 'openai',
    MNEMOS_API_LLM_BASE_URL: llm.openaiBaseUrl,
    MNEMOS_API_LLM_MODEL: 'fake',
    MNEMOS_API_LLM_API_KEY: 'x',
  });
  // Fact extraction answers nothing, so each bank holds exactly the memories the tests and adapters store.
  llm.always = { purpose: 'extract', behaviour: { kind: 'content', content: { facts: [] } } };
  return {
    engine,
    llm,
    client: new Mnemos({ baseUrl: engine.url }),
    say: (text) => llm.next({ kind: 'content', content: text }, 'other'),
    callTool: (name, args) => llm.next({ kind: 'tool-calls', calls: [{ name, arguments: args }] }, 'other'),
    async stop() {
      await engine.dispose();
      await llm.stop();
    },
  };
}

/** The chat messages of the agent-model requests the stand-in received (not the engine's own extract/reflect calls). */
export function agentRequests(llm: FakeLlm): Array<Array<{ role: string; content: unknown }>> {
  return llm.calls
    .filter((call) => call.purpose === 'other')
    .map((call) => (call.body['messages'] ?? []) as Array<{ role: string; content: unknown }>);
}

/** A Mnemos client for an address nothing listens on: every call fails at once with `connection_error`. */
export function unreachableClient(): Mnemos {
  return new Mnemos({ baseUrl: 'http://127.0.0.1:9', maxRetries: 0 });
}
