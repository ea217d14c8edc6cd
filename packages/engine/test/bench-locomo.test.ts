import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { testLocomoDir } from '../bench/test-assets.js';
import { evidenceRecall, loadConversation, parseSessionDate, percentile } from '../bench/locomo.js';
import { derivedMemory, derivedParts, derivedVector, loadLocomoText } from '../bench/locomo-text.js';

const dataDir = testLocomoDir();

test('session dates parse to UTC ISO times', () => {
  assert.equal(parseSessionDate('1:56 pm on 8 May, 2023'), '2023-05-08T13:56:00.000Z');
  assert.equal(parseSessionDate('12:04 am on 1 January, 2024'), '2024-01-01T00:04:00.000Z');
  assert.equal(parseSessionDate('12:30 pm on 9 June 2023'), '2023-06-09T12:30:00.000Z');
  assert.throws(() => parseSessionDate('yesterday'));
});

test('evidence recall counts the evidence found in the top k', () => {
  assert.equal(evidenceRecall(['D1:1', 'D2:2'], ['D2:2', 'D9:9', 'D1:1'], 1), 0.5);
  assert.equal(evidenceRecall(['D1:1', 'D2:2'], ['D2:2', 'D9:9', 'D1:1'], 3), 1);
  assert.equal(evidenceRecall(['D1:1'], [], 10), 0);
  assert.equal(percentile([1, 2, 3, 4], 50), 2);
  assert.equal(percentile([1, 2, 3, 4], 95), 4);
});

test('a conversation loads as ordered sessions with speaker-prefixed turns and scored questions', () => {
  const conv = loadConversation(path.join(dataDir, 'conv-26.json'));
  assert.equal(conv.sessions[0]?.key, 'session_1');
  assert.equal(conv.sessions[0]?.timestamp, '2023-05-08T13:56:00.000Z');
  assert.match(conv.sessions[0]?.turns[0]?.content ?? '', /^Caroline: /);
  const keys = conv.sessions.map((s) => Number(s.key.slice(8)));
  assert.deepEqual(
    keys,
    [...keys].sort((a, b) => a - b),
  );
  assert.equal(conv.queryTimestamp, conv.sessions[conv.sessions.length - 1]?.timestamp);
  assert.ok(conv.questions.length > 0);
  assert.ok(conv.questions.every((q) => q.category >= 1 && q.category <= 4 && q.evidence.length > 0));
  const withImage = conv.sessions.flatMap((s) => s.turns).find((t) => t.content.includes(' [shares '));
  assert.ok(withImage, 'image captions are part of the turn');
});

test('the benchmarks read LoCoMo as turns and questions, and derive as many distinct memories as a bank needs', () => {
  const { turns, questions } = loadLocomoText(dataDir);
  assert.ok(turns.length > 2_000 && questions.length > 700, `${turns.length} turns, ${questions.length} questions`);
  const memories = Array.from({ length: 10_000 }, (_, k) => derivedMemory(turns, k));
  assert.deepEqual(memories.slice(0, turns.length), turns, 'the first round is the turns as they are');
  const later = memories[turns.length + 5]!;
  assert.ok(later.startsWith(`${turns[5]!} `) && later.length > turns[5]!.length + 1, later);
  // Repeats come only from turns that are themselves repeated in the data set (short replies).
  assert.ok(new Set(memories).size > 0.99 * memories.length, `${new Set(memories).size} distinct of 10,000`);
});

test('a derived memory is made of the turns derivedParts names', () => {
  const { turns } = loadLocomoText(dataDir);
  assert.deepEqual(derivedParts(turns.length, 7), { turn: 7, other: undefined });
  for (const k of [turns.length, turns.length + 11, 3 * turns.length + 5]) {
    const { turn, other } = derivedParts(turns.length, k);
    assert.ok(other !== undefined);
    const memory = derivedMemory(turns, k);
    assert.ok(memory.startsWith(`${turns[turn]!} `), memory);
    // The appended sentence is the start of the other turn's text (after its speaker).
    const otherTurn = turns[other]!;
    const otherText = otherTurn.slice(otherTurn.indexOf(':') + 1).trim();
    assert.ok(otherText.startsWith(memory.slice(turns[turn]!.length + 1)), `${memory} / ${otherText}`);
  }
});

test("a derived memory's stand-in vector is its turn's, plus half its other turn's, normalised", () => {
  const turnVectors = [Float32Array.from([3, 4, 0]), Float32Array.from([0, 0, 2]), Float32Array.from([1, 0, 0])];
  assert.deepEqual(Array.from(derivedVector(turnVectors, 1)), [0, 0, 1]);
  const k = 4;
  const { turn, other } = derivedParts(turnVectors.length, k);
  assert.ok(other !== undefined && other !== turn);
  const sum = turnVectors[turn]!.map((x, i) => x + 0.5 * turnVectors[other]![i]!);
  const norm = Math.hypot(...sum);
  const got = derivedVector(turnVectors, k);
  sum.forEach((x, i) => assert.ok(Math.abs(got[i]! - x / norm) < 1e-6, `${got[i]} against ${x / norm}`));
  assert.deepEqual(Array.from(turnVectors[0]!), [3, 4, 0], 'the turn vectors are left as they are');
});
