// The Mastra adapter driven by Mastra's own Agent (generate, with its tool loop and processors) against a real engine;
// the agent's model is the stand-in LLM behind the AI SDK's OpenAI-compatible provider. @mastra/core 1.x needs
// Node >= 22.13: on an older Node every test here is skipped and says so, and CI runs this file again with Node 22
// (.ci/run), so the adapter is tested on every run.
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { Mnemos } from '@mnemos/client';
import {
  agentRequests,
  checkToolRoundTrip,
  startMemoryEngine,
  toolAnswer,
  unreachableClient,
  type MemoryEngine,
} from './helpers/memory-engine.js';

const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
const nodeTooOld = major < 22 || (major === 22 && minor < 13);
// Every test carries the reason, so a run's totals count them as skipped.
const skip = nodeTooOld && `Mastra needs Node >= 22.13 (this is ${process.version}); run this file with Node 22`;

type Adapter = typeof import('@mnemos/integrations/mastra');
type MastraAgent = typeof import('@mastra/core/agent').Agent;

let mem: MemoryEngine;
let model: ReturnType<ReturnType<typeof createOpenAICompatible>>;
// Loaded only on a Node that Mastra supports.
let adapter: Adapter;
let Agent: MastraAgent;

before(async () => {
  if (nodeTooOld) return;
  adapter = await import('@mnemos/integrations/mastra');
  ({ Agent } = await import('@mastra/core/agent'));
  mem = await startMemoryEngine();
  model = createOpenAICompatible({ name: 'stand-in', baseURL: mem.llm.openaiBaseUrl, apiKey: 'x' })('fake');
});
after(async () => {
  await mem?.stop();
});
beforeEach(() => {
  if (!nodeTooOld) mem.llm.calls.length = 0;
});

function agentWith(options: Partial<ConstructorParameters<MastraAgent>[0]>) {
  return new Agent({ id: 'assistant', name: 'Assistant', instructions: 'Use memory.', model, ...options });
}

test(
  'the tools reach the model with their schemas, and retain then recall round-trips through the bank',
  { skip },
  async () => {
    const bank = 'mastra-tools';
    const agent = agentWith({
      tools: adapter.mnemosMastraTools({ client: mem.client, bankId: bank, tags: ['agent'] }),
    });
    const [id] = await checkToolRoundTrip(mem, bank, async (prompt) => (await agent.generate(prompt)).text);
    assert.deepEqual([...(await mem.client.getMemory(bank, id!)).tags].sort(), ['agent', 'moves']);
  },
);

test("the reflect tool gives the agent the engine's answer and its citations", { skip }, async () => {
  const bank = 'mastra-reflect';
  const { memory_ids } = await mem.client.retain(bank, 'Farid drives an electric bicycle to work.');
  mem.callTool('reflect', { question: 'How does Farid get to work?' });
  mem.say('By electric bicycle.');
  const agent = agentWith({ tools: adapter.mnemosMastraTools({ client: mem.client, bankId: bank }) });
  const result = await agent.generate('How do I commute?');
  assert.equal(result.text, 'By electric bicycle.');
  const reflected = JSON.parse(toolAnswer(mem.llm, 1)) as { answer: string; citations: string[] };
  assert.match(reflected.answer, /electric bicycle/);
  assert.deepEqual(reflected.citations, memory_ids);
});

test(
  'the processor puts recalled memories in the system prompt of every step and stores the exchange',
  { skip },
  async () => {
    const bank = 'mastra-processor';
    await mem.client.retain(bank, 'Carol loves hiking in the Alps.', { timestamp: '2024-05-01T09:00:00Z' });
    const memory = new adapter.MnemosMemoryProcessor({ client: mem.client, bankId: bank });
    const tools = adapter.mnemosMastraTools({ client: mem.client, bankId: bank });
    const agent = agentWith({ tools, inputProcessors: [memory], outputProcessors: [memory] });

    mem.callTool('recall', { query: 'weekend plans' });
    mem.say('She likes hiking in the Alps.');
    const result = await agent.generate('What does Carol like to do on weekends?');
    assert.equal(result.text, 'She likes hiking in the Alps.');

    const requests = agentRequests(mem.llm);
    assert.equal(requests.length, 2, 'a tool step, then the answer');
    for (const messages of requests) {
      const system = messages.filter((m) => m.role === 'system').map((m) => String(m.content));
      assert.ok(system.includes('Use memory.'), system.join(' | '));
      const block = system.find((text) => text.startsWith('Relevant memories'));
      assert.match(block ?? '', /\n- \[2024-05-01\] Carol loves hiking in the Alps\.$/);
    }

    const stored = await mem.client.listMemories(bank);
    const texts = stored.items.map((m) => m.text).sort();
    assert.deepEqual(texts, [
      'Assistant: She likes hiking in the Alps.',
      'Carol loves hiking in the Alps.',
      'User: What does Carol like to do on weekends?',
    ]);
    const answer = stored.items.find((m) => m.text.startsWith('Assistant:'))!;
    assert.deepEqual(answer.metadata, { role: 'assistant' });
  },
);

test(
  'the processor leaves an empty recall out of the prompt, and the next run is given the stored turn',
  { skip },
  async () => {
    const bank = 'mastra-next-run';
    const memory = new adapter.MnemosMemoryProcessor({ client: mem.client, bankId: bank, retain: 'user' });
    const agent = agentWith({ inputProcessors: [memory], outputProcessors: [memory] });

    mem.say('Nice to meet you, Dana.');
    await agent.generate('I am Dana and I live in Porto.');
    const first = agentRequests(mem.llm)[0]!;
    assert.ok(!first.some((m) => String(m.content).startsWith('Relevant memories')), JSON.stringify(first));
    const stored = await mem.client.listMemories(bank);
    assert.deepEqual(
      stored.items.map((m) => m.text),
      ['User: I am Dana and I live in Porto.'],
    );

    mem.llm.calls.length = 0;
    mem.say('In Porto.');
    await agent.generate('Where do I live?');
    const system = agentRequests(mem.llm)[0]!
      .filter((m) => m.role === 'system')
      .map((m) => String(m.content));
    assert.ok(
      system.some((text) => /\n- \[\d{4}-\d{2}-\d{2}\] User: I am Dana and I live in Porto\.$/.test(text)),
      system.join(' | '),
    );
  },
);

test(
  'a memory failure fails the run, unless onError is given: then the run goes on without memory',
  { skip },
  async () => {
    const failing = (onError?: (error: unknown, phase: 'recall' | 'retain') => void) => {
      const memory = new adapter.MnemosMemoryProcessor({ client: unreachableClient(), bankId: 'nowhere', onError });
      return agentWith({ inputProcessors: [memory], outputProcessors: [memory] });
    };
    await assert.rejects(failing().generate('Hello?'), /Could not reach http:\/\/127\.0\.0\.1:9/);
    assert.equal(agentRequests(mem.llm).length, 0, 'the model is not asked when recall fails');

    mem.llm.calls.length = 0;
    const phases: string[] = [];
    mem.say('Hello without memory.');
    const result = await failing((error, phase) => {
      assert.equal((error as { code?: string }).code, 'connection_error');
      phases.push(phase);
    }).generate('Hello?');
    assert.equal(result.text, 'Hello without memory.');
    assert.deepEqual(phases, ['recall', 'retain']);
  },
);

test('a failing tool call reaches the model as the tool result, and the run goes on', { skip }, async () => {
  const tools = adapter.mnemosMastraTools({ client: unreachableClient(), bankId: 'nowhere' });
  mem.callTool('recall', { query: 'anything' });
  mem.say('Memory is down; answering without it.');
  const result = await agentWith({ tools }).generate('What do you know?');
  assert.equal(result.text, 'Memory is down; answering without it.');
  assert.match(toolAnswer(mem.llm, 1), /Could not reach http:\/\/127\.0\.0\.1:9/);
});

test('the tools and the processor refuse a missing client or bank with what to pass', { skip }, () => {
  const noClient = { bankId: 'alice' } as unknown as { client: Mnemos; bankId: string };
  assert.throws(() => adapter.mnemosMastraTools(noClient), /mnemosMastraTools: pass a Mnemos client as "client"/);
  assert.throws(
    () => new adapter.MnemosMemoryProcessor({ client: mem.client, bankId: '' }),
    /MnemosMemoryProcessor: "bankId" must name the memory bank/,
  );
});
