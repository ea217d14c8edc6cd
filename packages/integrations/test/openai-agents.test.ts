// The OpenAI Agents SDK tool set driven by the SDK's own Runner against a real engine; the agent's model is the
// stand-in LLM behind the SDK's Chat Completions provider.
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, Runner } from '@openai/agents-core';
import { OpenAIProvider } from '@openai/agents-openai';
import { mnemosAgentTools } from '@mnemos/integrations/openai-agents';
import {
  checkToolRoundTrip,
  startMemoryEngine,
  toolAnswer,
  unreachableClient,
  type MemoryEngine,
} from './helpers/memory-engine.js';

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

test('the tools reach the model with their schemas, and retain then recall round-trips through the bank', async () => {
  const agent = agentWith(mnemosAgentTools({ client: mem.client, bankId: 'agents-tools' }));
  await checkToolRoundTrip(mem, 'agents-tools', async (prompt) =>
    String((await runner.run(agent, prompt)).finalOutput),
  );
});

test("the reflect tool gives the agent the engine's answer and its citations", async () => {
  const bank = 'agents-reflect';
  const { memory_ids } = await mem.client.retain(bank, 'Farid drives an electric bicycle to work.');
  mem.callTool('reflect', { question: 'How does Farid get to work?' });
  mem.say('By electric bicycle.');
  const agent = agentWith(mnemosAgentTools({ client: mem.client, bankId: bank }));
  const result = await runner.run(agent, 'How do I commute?');
  assert.equal(result.finalOutput, 'By electric bicycle.');
  const reflected = JSON.parse(toolAnswer(mem.llm, 1)) as { answer: string; citations: string[] };
  assert.match(reflected.answer, /electric bicycle/);
  assert.deepEqual(reflected.citations, memory_ids);
});

test('an unreachable memory reaches the model as the tool answer and the run goes on', async () => {
  mem.callTool('recall', { query: 'anything' });
  mem.say('Memory is down; answering without it.');
  const result = await runner.run(agentWith(mnemosAgentTools({ client: unreachableClient(), bankId: 'x' })), 'Hi');
  assert.equal(result.finalOutput, 'Memory is down; answering without it.');
  assert.match(toolAnswer(mem.llm, 1), /^Memory error connection_error: Could not reach http:\/\/127\.0\.0\.1:9/);
});
