import assert from 'node:assert/strict';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { AutoTokenizer, env } from '@huggingface/transformers';
import { loadConversation } from '../bench/locomo.js';
import { rng } from '../bench/synthetic.js';
import { testLocomoDir } from '../bench/test-assets.js';
import { BATCH_TOKENS, MicroBatcher, type BatchHold } from '../src/embeddings/batcher.js';
import type { Embedder } from '../src/embeddings/embedder.js';
import { estimateModelTokens, groupByLength, paddedTokens } from '../src/embeddings/length-groups.js';
import { createLocalEmbedder } from '../src/embeddings/local.js';
import { MODEL_DIR, tempHome } from './helpers/engine.js';

/** The real model, loaded once for the tests that use it and closed when the file's tests end. */
let loaded: { model: Embedder; home: ReturnType<typeof tempHome> } | undefined;
async function realModel(): Promise<Embedder> {
  if (loaded === undefined) {
    const home = tempHome();
    const options = { model: MODEL_DIR, cacheDir: home.path, dtype: 'fp32' as const, log: () => undefined };
    loaded = { model: await createLocalEmbedder(options), home };
  }
  return loaded.model;
}
after(async () => {
  await loaded?.model.close();
  loaded?.home.remove();
});

/** Every LoCoMo conversation turn, in conversation order. */
function locomoTurns(): string[] {
  const dir = testLocomoDir();
  return ['conv-26', 'conv-30', 'conv-41', 'conv-42', 'conv-43'].flatMap((name) =>
    loadConversation(path.join(dir, `${name}.json`)).sessions.flatMap((s) => s.turns.map((t) => t.content)),
  );
}

describe('grouping texts by token length', () => {
  it('sorts by length and cuts where the padded size would pass the cap; a text over the cap goes alone', () => {
    // Sorted: 1 (5), 3 (5), 5 (11), 2 (12), 0 (30), 4 (40). 3 x 11 = 33 fits 36; 4 x 12 = 48 does not.
    assert.deepEqual(groupByLength([30, 5, 12, 5, 40, 11], 36), [[1, 3, 5], [2], [0], [4]]);
    assert.deepEqual(groupByLength([], 36), []);
    assert.equal(paddedTokens([3, 9, 4]), 27);
    assert.equal(paddedTokens([]), 0);
  });

  it('places every text exactly once, within the cap, in non-overlapping length ranges', () => {
    const r = rng(7);
    for (let trial = 0; trial < 50; trial++) {
      const lengths = Array.from({ length: Math.floor(r() * 200) }, () => 3 + Math.floor(r() * 120));
      const cap = 64 + Math.floor(r() * 4000);
      const groups = groupByLength(lengths, cap);
      assert.deepEqual(
        groups.flat().sort((a, b) => a - b),
        lengths.map((_, i) => i),
      );
      let previousLongest = 0;
      for (const group of groups) {
        const own = group.map((i) => lengths[i]!);
        assert.ok(group.length === 1 || paddedTokens(own) <= cap, `group over the cap: ${own.join(',')} (cap ${cap})`);
        assert.deepEqual(
          own,
          [...own].sort((a, b) => a - b),
        );
        assert.ok(own[0]! >= previousLongest, 'length ranges overlap');
        previousLongest = own[own.length - 1]!;
      }
    }
  });

  it('on LoCoMo turns, pads far less than batches of 32 in arrival order', () => {
    const lengths = locomoTurns().map(estimateModelTokens);
    let arrival = 0;
    for (let i = 0; i < lengths.length; i += 32) arrival += paddedTokens(lengths.slice(i, i + 32));
    const grouped = groupByLength(lengths, BATCH_TOKENS.document)
      .map((group) => paddedTokens(group.map((i) => lengths[i]!)))
      .reduce((a, b) => a + b, 0);
    const real = lengths.reduce((a, b) => a + b, 0);
    // Arrival order pads LoCoMo turns to about twice their tokens; length groups stay close to the real count.
    assert.ok(arrival > 1.6 * real, `arrival-order batches ${arrival} against ${real} real tokens`);
    assert.ok(grouped < 1.15 * real, `length groups ${grouped} against ${real} real tokens`);
  });

  it("cuts one retain request's turns (32, as a session comes) into groups that pad them by under a tenth", () => {
    // The batcher often sees one request's texts alone; a large cap would leave a sixth of the model's work on padding.
    const lengths = locomoTurns().map(estimateModelTokens);
    let padded = 0;
    for (let start = 0; start < lengths.length; start += 32) {
      const request = lengths.slice(start, start + 32);
      for (const group of groupByLength(request, BATCH_TOKENS.document))
        padded += paddedTokens(group.map((i) => request[i]!));
    }
    const real = lengths.reduce((a, b) => a + b, 0);
    assert.ok(padded < 1.1 * real, `per-request groups ${padded} against ${real} real tokens`);
  });

  it("estimates the model's own token count closely, and caps it at what the model reads", async () => {
    env.allowRemoteModels = false;
    env.allowLocalModels = true;
    env.localModelPath = `${path.dirname(MODEL_DIR)}/`;
    const tokenizer = await AutoTokenizer.from_pretrained(path.basename(MODEL_DIR));
    const turns = locomoTurns();
    let totalError = 0;
    for (const turn of turns) totalError += Math.abs(estimateModelTokens(turn) - tokenizer.encode(turn).length);
    assert.ok(totalError / turns.length < 2, `mean error ${(totalError / turns.length).toFixed(2)} tokens`);
    assert.equal(estimateModelTokens('word '.repeat(5_000)), 512);
  });
});

/** An embedder that answers only when the test says so, recording each batch it was given. */
function heldEmbedder() {
  const batches: string[][] = [];
  const waiting: Array<() => void> = [];
  const inner: Embedder = {
    id: 'held',
    dimension: 1,
    embed(texts) {
      batches.push([...texts]);
      const vectors = texts.map((t) => Float32Array.of(Number(t.split(':')[0])));
      return new Promise((resolve) => waiting.push(() => resolve(vectors)));
    },
    async close() {},
  };
  /** Answers the oldest batch still waiting, then lets the batcher send its next one. */
  const answerNext = async () => {
    waiting.shift()!();
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { inner, batches, answerNext };
}

describe('micro-batcher grouping by token length', () => {
  it('sends the length group of the oldest waiting text; each caller gets its own vectors in its order', async () => {
    const { inner, batches, answerNext } = heldEmbedder();
    // A text "n:xxx" is n (its vector) and as many tokens as it has x.
    const tokens = (text: string) => text.split(':')[1]!.length;
    const batcher = new MicroBatcher(inner, { query: 64, document: 64 }, undefined, 1, tokens);
    const text = (id: number, length: number) => `${id}:${'x'.repeat(length)}`;
    const first = batcher.embed([text(1, 4)], 'document');
    // The model is idle, so the first text left alone; these queue behind it.
    const a = batcher.embed([text(2, 30), text(3, 5), text(4, 6)], 'document');
    const b = batcher.embed([text(5, 7), text(6, 29), text(7, 18)], 'document');
    const c = batcher.embed([text(8, 31)], 'document');
    assert.deepEqual(batches, [[text(1, 4)]]);
    await answerNext();
    // Groups within 64 padded tokens: (5, 6, 7), (18, 29), (30, 31). The oldest waiting text (2, 30 tokens) leaves
    // with its group, which holds the newest text (8, 31 tokens).
    assert.deepEqual(batches[1], [text(2, 30), text(8, 31)]);
    await answerNext();
    // The oldest left is 3 (5 tokens); 18 would make 4 x 18 = 72 padded tokens.
    assert.deepEqual(batches[2], [text(3, 5), text(4, 6), text(5, 7)]);
    await answerNext();
    assert.deepEqual(batches[3], [text(7, 18), text(6, 29)]);
    await answerNext();
    assert.equal(batches.length, 4);
    const vectors = (await Promise.all([first, a, b, c])).map((list) => list.map((v) => v[0]));
    assert.deepEqual(vectors, [[1], [2, 3, 4], [5, 6, 7], [8]]);
    assert.equal(batcher.queueDepth, 0);
  });

  it('counts slow texts for a few milliseconds per batch, not a whole window at once', async () => {
    const { inner, batches, answerNext } = heldEmbedder();
    let counted = 0;
    // A chunk of made-up words takes the tokenizer a millisecond or more; the delay stands in for that.
    const slowTokens = (text: string) => {
      counted++;
      for (const until = performance.now() + 1; performance.now() < until;);
      return text.split(':')[1]!.length;
    };
    const batcher = new MicroBatcher(inner, { query: 64, document: 64 }, undefined, 1, slowTokens);
    const all = batcher.embed(
      Array.from({ length: 200 }, (_, i) => `${i}:xxxx`),
      'document',
    );
    assert.ok(counted < 20, `${counted} texts counted for the first batch`);
    assert.ok(batches[0]!.length >= 1 && batches[0]![0] === '0:xxxx', 'the oldest text leaves first');
    while (batcher.queueDepth > 0) await answerNext();
    await answerNext();
    assert.equal(counted, 200, 'each text counted once');
    assert.deepEqual(
      (await all).map((v) => v[0]),
      Array.from({ length: 200 }, (_, i) => i),
    );
  });

  it('caps query batches and document batches each by their own padded tokens', async () => {
    const { inner, batches, answerNext } = heldEmbedder();
    const tokens = (text: string) => text.split(':')[1]!.length;
    const batcher = new MicroBatcher(inner, { query: 32, document: 8 }, undefined, 1, tokens);
    const busy = batcher.embed(['0:xx'], 'document');
    const documents = batcher.embed(
      Array.from({ length: 8 }, (_, i) => `${i}:xx`),
      'document',
    );
    const queries = batcher.embed(
      Array.from({ length: 8 }, (_, i) => `${i}:xx`),
      'query',
    );
    while (batches.length < 4) await answerNext();
    // Queries leave first, eight of two tokens within 32; documents go four of two tokens at a time within 8.
    assert.deepEqual(
      batches.map((b) => b.length),
      [1, 8, 4, 4],
    );
    await answerNext();
    assert.equal((await Promise.all([busy, documents, queries])).flat().length, 17);
  });

  it("counts a bulk retain's texts a window at a time, not all at once", async () => {
    const { inner, batches, answerNext } = heldEmbedder();
    let counted = 0;
    const tokens = (text: string) => {
      counted++;
      return text.split(':')[1]!.length;
    };
    const batcher = new MicroBatcher(inner, { query: 64, document: 64 }, undefined, 1, tokens);
    const all = batcher.embed(
      Array.from({ length: 5_000 }, (_, i) => `${i}:xxxx`),
      'document',
    );
    // The first batch was chosen among the oldest waiting texts only.
    assert.ok(counted <= 128, `${counted} texts counted for the first batch`);
    assert.equal(batches[0]!.length, 16, '16 texts of 4 tokens fill 64 padded tokens');
    while (batcher.queueDepth > 0 || batches.length === 0) await answerNext();
    await answerNext();
    assert.equal(counted, 5_000, 'each text counted once');
    assert.deepEqual(
      (await all).map((v) => v[0]),
      Array.from({ length: 5_000 }, (_, i) => i),
    );
  });

  it('with the real model, gives each caller the vectors of its own texts in order, whatever the batches', async () => {
    const model = await realModel();
    const turns = locomoTurns().slice(0, 48);
    const batcher = new MicroBatcher(model, BATCH_TOKENS, undefined, 2);
    const callers = [turns.slice(0, 20), turns.slice(20, 21), turns.slice(21, 48)];
    const answers = await Promise.all(callers.map((texts) => batcher.embed(texts, 'document')));
    const expected = await model.embed(turns, 'document');
    const got = answers.flat();
    assert.equal(got.length, turns.length);
    got.forEach((vector, i) => {
      let dot = 0;
      for (let d = 0; d < vector.length; d++) dot += vector[d]! * expected[i]![d]!;
      assert.ok(dot > 0.9999, `turn ${i}: cosine ${dot}`);
    });
  });
});

/** A hold whose waits end only when the test says so; records each wait's length and whether it was cancelled. */
function manualHold(ms: number) {
  const waits: Array<{ ms: number; run: () => void; cancelled: boolean }> = [];
  const hold: BatchHold = {
    ms,
    schedule(run, waitMs) {
      const wait = { ms: waitMs, run, cancelled: false };
      waits.push(wait);
      return () => (wait.cancelled = true);
    },
  };
  /** Ends the latest wait, as its timer would. */
  const end = async () => {
    const wait = waits.at(-1)!;
    assert.equal(wait.cancelled, false, 'the wait being ended is still pending');
    wait.run();
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { hold, waits, end };
}

describe('micro-batcher holding a batch for company while the model is busy', () => {
  const tokens = (text: string) => text.split(':')[1]!.length;
  const query = (id: number) => `${id}:xxxx`;

  it('sends a lone query to an idle model at once, without a wait', () => {
    const { inner, batches } = heldEmbedder();
    const { hold, waits } = manualHold(4);
    const batcher = new MicroBatcher(inner, { query: 64, document: 64 }, undefined, 2, tokens, hold);
    void batcher.embed([query(1)], 'query');
    assert.deepEqual(batches, [[query(1)]]);
    assert.equal(waits.length, 0);
  });

  it('holds queries that arrive while a batch is at the model, then sends them together when the wait ends', async () => {
    const { inner, batches, answerNext } = heldEmbedder();
    const { hold, waits, end } = manualHold(4);
    const batcher = new MicroBatcher(inner, { query: 64, document: 64 }, undefined, 2, tokens, hold);
    const answers = [1, 2, 3, 4].map((id) => batcher.embed([query(id)], 'query'));
    // 1 went to the idle model; 2, 3 and 4 wait together for one wait of the hold's length, not one each.
    assert.deepEqual(batches, [[query(1)]]);
    assert.deepEqual(
      waits.map((w) => w.ms),
      [4],
    );
    await end();
    assert.deepEqual(batches[1], [query(2), query(3), query(4)]);
    await answerNext();
    await answerNext();
    assert.deepEqual(
      (await Promise.all(answers)).map((v) => v[0]![0]),
      [1, 2, 3, 4],
    );
  });

  it('sends the held queries as soon as the batch at the model comes back, and cancels the wait', async () => {
    const { inner, batches, answerNext } = heldEmbedder();
    const { hold, waits } = manualHold(4);
    const batcher = new MicroBatcher(inner, { query: 64, document: 64 }, undefined, 2, tokens, hold);
    const answers = [1, 2, 3].map((id) => batcher.embed([query(id)], 'query'));
    await answerNext();
    assert.deepEqual(batches[1], [query(2), query(3)]);
    assert.equal(waits[0]!.cancelled, true);
    await answerNext();
    assert.equal((await Promise.all(answers)).length, 3);
    // The next query finds the model idle again and leaves at once.
    void batcher.embed([query(4)], 'query');
    assert.deepEqual(batches[2], [query(4)]);
    assert.equal(waits.length, 1);
  });

  it('sends held texts that fill a batch without waiting', () => {
    const { inner, batches } = heldEmbedder();
    const { hold } = manualHold(4);
    // Texts of 4 tokens: 4 of them fill 16 padded tokens.
    const batcher = new MicroBatcher(inner, { query: 16, document: 16 }, undefined, 2, tokens, hold);
    void batcher.embed([query(1)], 'query');
    void batcher.embed([query(2), query(3), query(4)], 'query');
    assert.equal(batches.length, 1, 'three texts of 4 tokens do not fill 16 padded tokens');
    void batcher.embed([query(5)], 'query');
    assert.deepEqual(batches[1], [query(2), query(3), query(4), query(5)]);
  });

  it("fails only the callers whose texts were in the failed model call; the other batches' callers get vectors", async () => {
    let calls = 0;
    const inner: Embedder = {
      id: 'second-call-fails',
      dimension: 1,
      async embed(texts) {
        calls++;
        if (calls === 2) throw new Error('the model failed');
        return texts.map((t) => Float32Array.of(Number(t.split(':')[0])));
      },
      async close() {},
    };
    const { hold, end } = manualHold(4);
    const batcher = new MicroBatcher(inner, { query: 64, document: 64 }, undefined, 2, tokens, hold);
    const first = batcher.embed([query(1)], 'query');
    const held = Promise.allSettled([2, 3].map((id) => batcher.embed([query(id)], 'query')));
    await end();
    const after = batcher.embed([query(4)], 'query');
    const results = [...(await Promise.allSettled([first])), ...(await held), ...(await Promise.allSettled([after]))];
    assert.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'rejected', 'rejected', 'fulfilled'],
    );
    assert.equal((results[3] as PromiseFulfilledResult<Float32Array[]>).value[0]![0], 4);
  });

  it('with the real model, gives each held query the vector an unbatched embedding gives it', async () => {
    const model = await realModel();
    const queries = locomoTurns().slice(100, 108);
    const { hold, end } = manualHold(4);
    const batcher = new MicroBatcher(model, BATCH_TOKENS, undefined, 2, estimateModelTokens, hold);
    const answers = queries.map((q) => batcher.embed([q], 'query'));
    await end();
    const got = (await Promise.all(answers)).map((list) => list[0]!);
    for (const [i, q] of queries.entries()) {
      const [alone] = await model.embed([q], 'query');
      const worst = Math.max(...got[i]!.map((x, d) => Math.abs(x - alone![d]!)));
      assert.ok(worst < 1e-5, `query ${i}: largest difference ${worst}`);
    }
  });
});
