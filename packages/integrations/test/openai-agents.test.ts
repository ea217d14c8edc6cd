// The OpenAI Agents SDK tool set driven by the SDK's own Runner against a real engine; the agent's model is the
// stand-in LLM behind the SDK's Chat Completions provider.
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, Runner } from '@openai/agents-core';
import { OpenAIProvider } from '@openai/agents-openai';
import { mnemosAgentTools } from '@mnemos/integrations/openai-agents';
import { agentRequests, startMemoryEngine, unreachableClient, type MemoryEngine } from './helpers/memory-engine.js';

let mem: MemoryEngine;
let runner: Runner;

before(async () => {
  mem = await startMemoryEngine();
  const modelProvider = new OpenAIProvider({ baseURL: mem.llm.openaiBaseUrl, apiKey: 'x', useResponses: false });
  runner = new Runner({ modelProvider, tracingDisabled: true });
});
after(async () => {
  await mem?.stop();
});
beforeEach(() => {
  mem.llm.calls.length = 0;
});

function agentWith(tools: ReturnType<typeof mnemosAgentTools>) {
  return new Agent({ name: 'Assistant', instructions: 'Use memory.', model: 'fake', tools });
}

/** The text the SDK sent back to the model as the answer of the first tool call. */
function toolAnswer(requestIndex: number): string {
  const message = agentRequests(mem.llm)[requestIndex]!.find((m) => m.role === 'tool');
  return String(message?.content);
}

test('the tools reach the model with their schemas, and retain then recall round-trips through the bank', async () => {
  const bank = 'agents-tools';
  const agent = agentWith(mnemosAgentTools({ client: mem.client, bankId: bank }));

  mem.callTool('retain', { content: 'Erin is moving to Lisbon in March.' });
  mem.say('I will remember that.');
  const stored = await runner.run(agent, 'I am moving to Lisbon in March.');
  assert.equal(stored.finalOutput, 'I will remember that.');
  type OfferedTool = { function: { name: string; parameters: { required?: string[] } } };
  const offered = (mem.llm.calls[0]!.body['tools'] ?? []) as OfferedTool[];
  assert.deepEqual(
    offered.map((t) => t.function.name),
    ['retain', 'recall', 'reflect'],
  );
  assert.ok(offered[1]!.function.parameters.required?.includes('query'));
  const { memory_ids } = JSON.parse(toolAnswer(1)) as { memory_ids: string[] };
  assert.equal((await mem.client.getMemory(bank, memory_ids[0]!)).text, 'Erin is moving to Lisbon in March.');

  mem.llm.calls.length = 0;
  mem.callTool('recall', { query: 'Where is Erin moving?' });
  mem.say('Lisbon.');
  const answered = await runner.run(agent, 'Where am I moving?');
  assert.equal(answered.finalOutput, 'Lisbon.');
  const recalled = JSON.parse(toolAnswer(1)) as { memories: Array<{ id: string; text: string; relevance?: number }> };
  assert.deepEqual(
    recalled.memories.map((m) => m.id),
    memory_ids,
  );
  const relevance = recalled.memories[0]!.relevance;
  assert.ok(relevance !== undefined && relevance > 0 && relevance <= 1, String(relevance));
});

test("the reflect tool gives the agent the engine's answer and its citations", async () => {
  const bank = 'agents-reflect';
  const { memory_ids } = await mem.client.retain(bank, 'Farid drives an electric bicycle to work.');
  mem.callTool('reflect', { question: 'How does Farid get to work?' });
  mem.say('By electric bicycle.');
  const agent = agentWith(mnemosAgentTools({ client: mem.client, bankId: bank }));
  const result = await runner.run(agent, 'How do I commute?');
  assert.equal(result.finalOutput, 'By electric bicycle.');
  const reflected = JSON.parse(toolAnswer(1)) as { answer: string; citations: string[] };
  assert.match(reflected.answer, /electric bicycle/);
  assert.deepEqual(reflected.citations, memory_ids);
});

test('an unreachable memory reaches the model as the tool answer and the run goes on', async () => {
  mem.callTool('recall', { query: 'anything' });
  mem.say('Memory is down; answering without it.');
  const result = await runner.run(agentWith(mnemosAgentTools({ client: unreachableClient(), bankId: 'x' })), 'Hi');
  assert.equal(result.finalOutput, 'Memory is down; answering without it.');
  assert.match(toolAnswer(1), /^Memory error connection_error: Could not reach http:\/\/127\.0\.0\.1:9/);
});
