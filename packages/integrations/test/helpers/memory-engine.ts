import assert from 'node:assert/strict';
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

/** The tools the agent model's first request offered (OpenAI function tools): each name and its required inputs. */
export function offeredTools(llm: FakeLlm): Array<{ name: string; required: string[] }> {
  type OfferedTool = { function: { name: string; parameters: { required?: string[] } } };
  const first = llm.calls.find((call) => call.purpose === 'other');
  return ((first?.body['tools'] ?? []) as OfferedTool[]).map((t) => ({
    name: t.function.name,
    required: t.function.parameters.required ?? [],
  }));
}

/** The text the framework sent back to the model as the answer of the first tool call in one agent request. */
export function toolAnswer(llm: FakeLlm, requestIndex: number): string {
  const message = agentRequests(llm)[requestIndex]?.find((m) => m.role === 'tool');
  return String(message?.content);
}

/**
 * What every tool adapter must do, driven by its framework's agent (`run` sends one user message and answers the final
 * text): offer the model the three tools with their schemas, store what the model's retain call gives, and find it
 * again with a relevance on the model's recall call. Answers the stored memory's ids.
 */
export async function checkToolRoundTrip(
  mem: MemoryEngine,
  bank: string,
  run: (prompt: string) => Promise<string>,
): Promise<string[]> {
  mem.llm.calls.length = 0;
  mem.callTool('retain', { content: 'Erin is moving to Lisbon in March.', tags: ['moves'] });
  mem.say('I will remember that.');
  assert.equal(await run('I am moving to Lisbon in March.'), 'I will remember that.');
  const offered = offeredTools(mem.llm);
  assert.deepEqual(
    offered.map((t) => t.name),
    ['retain', 'recall', 'reflect'],
  );
  assert.ok(offered[1]!.required.includes('query'));
  const { memory_ids } = JSON.parse(toolAnswer(mem.llm, 1)) as { memory_ids: string[] };
  assert.equal((await mem.client.getMemory(bank, memory_ids[0]!)).text, 'Erin is moving to Lisbon in March.');

  mem.llm.calls.length = 0;
  mem.callTool('recall', { query: 'Where is Erin moving?' });
  mem.say('Lisbon.');
  assert.equal(await run('Where am I moving?'), 'Lisbon.');
  const recalled = JSON.parse(toolAnswer(mem.llm, 1)) as { memories: Array<{ id: string; relevance?: number }> };
  assert.deepEqual(
    recalled.memories.map((m) => m.id),
    memory_ids,
  );
  const relevance = recalled.memories[0]!.relevance;
  assert.ok(relevance !== undefined && relevance > 0 && relevance <= 1, String(relevance));
  return memory_ids;
}
