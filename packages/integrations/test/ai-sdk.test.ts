// The Vercel AI SDK adapter driven by the AI SDK itself (generateText, streamText, wrapLanguageModel) against a real
// engine; the agent's model is the stand-in LLM behind the AI SDK's OpenAI-compatible provider.
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText, simulateStreamingMiddleware, stepCountIs, streamText, wrapLanguageModel } from 'ai';
import { MnemosError } from '@mnemos/client';
import { mnemosMemory, mnemosTools } from '@mnemos/integrations/ai-sdk';
import { agentRequests, startMemoryEngine, unreachableClient, type MemoryEngine } from './helpers/memory-engine.js';

let mem: MemoryEngine;
let model: ReturnType<ReturnType<typeof createOpenAICompatible>>;

before(async () => {
  mem = await startMemoryEngine();
  model = createOpenAICompatible({ name: 'stand-in', baseURL: mem.llm.openaiBaseUrl, apiKey: 'x' })('fake');
});
after(async () => {
  await mem?.stop();
});
beforeEach(() => {
  mem.llm.calls.length = 0;
});

test('the retain tool stores what the model asks it to, and the recall tool finds it', async () => {
  const bank = 'ai-tools';
  const tools = mnemosTools({ client: mem.client, bankId: bank, tags: ['agent'] });

  mem.callTool('retain', { content: 'Alice prefers green tea over coffee.', tags: ['drinks'] });
  mem.say('Noted.');
  const stored = await generateText({ model, tools, stopWhen: stepCountIs(3), prompt: 'I prefer green tea.' });
  assert.equal(stored.text, 'Noted.');
  const retained = stored.steps[0]!.toolResults[0]!;
  assert.equal(retained.toolName, 'retain');
  const memory = await mem.client.getMemory(bank, (retained.output as { memory_ids: string[] }).memory_ids[0]!);
  assert.equal(memory.text, 'Alice prefers green tea over coffee.');
  assert.deepEqual([...memory.tags].sort(), ['agent', 'drinks']);

  mem.llm.calls.length = 0;
  mem.callTool('recall', { query: 'What does Alice drink?' });
  mem.say('Green tea.');
  const answered = await generateText({ model, tools, stopWhen: stepCountIs(3), prompt: 'What does Alice drink?' });
  const recalled = answered.steps[0]!.toolResults[0]!.output as {
    memories: Array<{ id: string; text: string; relevance?: number }>;
  };
  assert.equal(recalled.memories[0]!.text, 'Alice prefers green tea over coffee.');
  assert.equal(recalled.memories[0]!.id, memory.id);
  const relevance = recalled.memories[0]!.relevance;
  assert.ok(relevance !== undefined && relevance > 0 && relevance <= 1, String(relevance));
  // The AI SDK sent the tool's answer back to the model in the second request.
  const second = agentRequests(mem.llm)[1]!;
  const toolMessage = second.find((m) => m.role === 'tool');
  assert.match(String(toolMessage?.content), /green tea over coffee/);
});

test('the reflect tool answers from memory with citations (the engine asks its LLM)', async () => {
  const bank = 'ai-reflect';
  const { memory_ids } = await mem.client.retain(bank, 'Bruno is allergic to peanuts.');
  const tools = mnemosTools({ client: mem.client, bankId: bank });
  mem.callTool('reflect', { question: 'Is Bruno allergic to anything?' });
  mem.say('He is allergic to peanuts.');
  const result = await generateText({ model, tools, stopWhen: stepCountIs(3), prompt: 'Any allergies for Bruno?' });
  const output = result.steps[0]!.toolResults[0]!.output as { answer: string; citations: string[] };
  assert.match(output.answer, /allergic to peanuts/);
  assert.deepEqual(output.citations, memory_ids);
  assert.equal(mem.llm.count('reflect'), 1);
});

test('a failing tool call comes back to the model as a tool error, not a crash', async () => {
  const tools = mnemosTools({ client: unreachableClient(), bankId: 'nowhere' });
  mem.callTool('recall', { query: 'anything' });
  mem.say('Memory is unavailable.');
  const result = await generateText({ model, tools, stopWhen: stepCountIs(3), prompt: 'What do you know?' });
  assert.equal(result.text, 'Memory is unavailable.');
  const error = result.steps[0]!.content.find((part) => part.type === 'tool-error');
  assert.ok(error, 'the step holds a tool error');
  assert.ok(error.error instanceof MnemosError && error.error.code === 'connection_error');
});

test('the middleware adds recalled memories to the prompt and stores the exchange after the call', async () => {
  const bank = 'ai-middleware';
  await mem.client.retain(bank, 'Carol loves hiking in the Alps.', { timestamp: '2024-05-01T09:00:00Z' });
  const memoryModel = wrapLanguageModel({ model, middleware: mnemosMemory({ client: mem.client, bankId: bank }) });
  mem.say('She likes hiking in the Alps.');
  const result = await generateText({
    model: memoryModel,
    system: 'You are a helpful assistant.',
    prompt: 'What does Carol like to do on weekends?',
  });
  assert.equal(result.text, 'She likes hiking in the Alps.');

  const messages = agentRequests(mem.llm)[0]!;
  assert.deepEqual(
    messages.map((m) => m.role),
    ['system', 'system', 'user'],
  );
  assert.equal(messages[0]!.content, 'You are a helpful assistant.');
  const memoryPrompt = String(messages[1]!.content);
  assert.match(memoryPrompt, /^Relevant memories.*\n- \[2024-05-01\] Carol loves hiking in the Alps\.$/);

  const stored = await mem.client.listMemories(bank);
  const texts = stored.items.map((m) => m.text);
  assert.ok(texts.includes('User: What does Carol like to do on weekends?'), texts.join(' | '));
  assert.ok(texts.includes('Assistant: She likes hiking in the Alps.'), texts.join(' | '));
  const answer = stored.items.find((m) => m.text.startsWith('Assistant:'))!;
  assert.deepEqual(answer.metadata, { role: 'assistant' });
});

test('the middleware leaves an empty recall out of the prompt; retain "user" stores only the question', async () => {
  const bank = 'ai-empty';
  const memoryModel = wrapLanguageModel({
    model,
    middleware: mnemosMemory({ client: mem.client, bankId: bank, retain: 'user' }),
  });
  mem.say('I do not know yet.');
  await generateText({ model: memoryModel, prompt: 'Where does Dana live?' });
  assert.deepEqual(
    agentRequests(mem.llm)[0]!.map((m) => m.role),
    ['user'],
  );
  const stored = await mem.client.listMemories(bank);
  assert.deepEqual(
    stored.items.map((m) => m.text),
    ['User: Where does Dana live?'],
  );
});

test('in a tool loop every step sees the memories, and the question and final answer are stored once', async () => {
  const bank = 'ai-loop';
  await mem.client.retain(bank, 'Lena is training for a half marathon.');
  const memoryModel = wrapLanguageModel({ model, middleware: mnemosMemory({ client: mem.client, bankId: bank }) });
  mem.callTool('retain', { content: 'Lena runs every Tuesday.' });
  mem.say('Good luck with the half marathon.');
  const question = 'I run every Tuesday; any advice for my training?';
  const tools = mnemosTools({ client: mem.client, bankId: bank });
  const result = await generateText({ model: memoryModel, tools, stopWhen: stepCountIs(3), prompt: question });
  assert.equal(result.steps.length, 2);
  for (const messages of agentRequests(mem.llm)) {
    const block = String(messages.find((m) => m.role === 'system')?.content);
    assert.match(block, /- \[[\d-]{10}\] Lena is training for a half marathon\./);
    assert.doesNotMatch(block, /User: I run every Tuesday/, 'the question is not shown to the model as a memory');
  }
  const texts = (await mem.client.listMemories(bank)).items.map((m) => m.text).sort();
  assert.deepEqual(texts, [
    'Assistant: Good luck with the half marathon.',
    'Lena is training for a half marathon.',
    'Lena runs every Tuesday.',
    `User: ${question}`,
  ]);
});

test('the middleware puts at most 1024 tokens of memories into a prompt unless recall says otherwise', async () => {
  const bank = 'ai-budget';
  const words = 'tomatoes basil compost watering seedlings mulch trellis harvest pruning soil'.split(' ');
  // Eight memories of about 1,100 characters (one chunk each) and 150-200 tokens: 1,200 tokens or more in all.
  const notes = Array.from(
    { length: 8 },
    (_, n) =>
      `Kai's garden note ${n + 1}: ${Array.from({ length: 140 }, (_, i) => words[(i + n) % words.length]).join(' ')}.`,
  );
  await mem.client.retainBatch(bank, notes);
  const memoryLines = async (recall?: { max_tokens: number }) => {
    mem.llm.calls.length = 0;
    const memoryModel = wrapLanguageModel({
      model,
      middleware: mnemosMemory({ client: mem.client, bankId: bank, retain: 'none', recall }),
    });
    mem.say('Noted.');
    await generateText({ model: memoryModel, prompt: "What are Kai's garden notes about?" });
    const block = agentRequests(mem.llm)[0]!.find((m) => m.role === 'system');
    const content: unknown = block?.content;
    return (typeof content === 'string' ? content : '').split('\n').filter((line) => line.startsWith('- [')).length;
  };
  const byDefault = await memoryLines();
  assert.ok(byDefault >= 1 && byDefault <= 6, `${byDefault} memories in the prompt`);
  assert.equal(await memoryLines({ max_tokens: 4096 }), 8);
});

test('the middleware stores a streamed answer once the stream ends', async () => {
  const bank = 'ai-stream';
  const memoryModel = wrapLanguageModel({
    model,
    middleware: [mnemosMemory({ client: mem.client, bankId: bank }), simulateStreamingMiddleware()],
  });
  mem.say('Streaming answers are remembered too.');
  const result = streamText({ model: memoryModel, prompt: 'Do you remember streamed answers?' });
  let text = '';
  for await (const delta of result.textStream) text += delta;
  assert.equal(text, 'Streaming answers are remembered too.');
  const stored = await mem.client.listMemories(bank);
  assert.ok(stored.items.some((m) => m.text === 'Assistant: Streaming answers are remembered too.'));
});

test('an unreachable memory fails the call, unless onError takes the failure and the call goes on', async () => {
  const failing = wrapLanguageModel({ model, middleware: mnemosMemory({ client: unreachableClient(), bankId: 'x' }) });
  await assert.rejects(
    generateText({ model: failing, prompt: 'Hello?', maxRetries: 0 }),
    (error: unknown) => error instanceof MnemosError && error.code === 'connection_error',
  );
  assert.equal(agentRequests(mem.llm).length, 0, 'the model is not called when recall fails');

  const phases: string[] = [];
  const tolerant = wrapLanguageModel({
    model,
    middleware: mnemosMemory({ client: unreachableClient(), bankId: 'x', onError: (_e, phase) => phases.push(phase) }),
  });
  mem.say('Hello!');
  const result = await generateText({ model: tolerant, prompt: 'Hello?' });
  assert.equal(result.text, 'Hello!');
  assert.deepEqual(phases, ['recall', 'retain']);
});

test('the adapters refuse a missing client or bank with a message that says what to pass', () => {
  assert.throws(() => mnemosTools({ client: mem.client, bankId: '' }), /"bankId" must name the memory bank/);
  assert.throws(() => mnemosMemory({ client: undefined as never, bankId: 'a' }), /pass a Mnemos client as "client"/);
});
