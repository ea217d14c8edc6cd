#!/usr/bin/env node
// Fits the coefficients of recall's relevance figure (packages/engine/src/recall/relevance.ts) on LoCoMo and measures
// what a threshold on it means.
//
//   node --conditions=source --import tsx scripts/fit-relevance.mjs
//   ... --fit conv-26,conv-30,conv-41 --check conv-42,conv-43 --top 20 --data <LoCoMo folder>
//
// It opens an engine in-process (a fresh temporary MNEMOS_HOME, the local model, no LLM), retains each conversation
// as the LoCoMo bench does (one memory per turn, "Speaker: text", metadata.dia_id), and recalls every category 1-4
// question. Each of the top results is an example: its ranking score and cosine, labelled relevant when it is one of
// the turns the question cites as evidence. A logistic regression (Newton's method, a small ridge) is fitted on the
// --fit conversations; the --check conversations measure, with the list cap the engine applies, the precision and
// recall of "relevance >= t" for a few thresholds t. It prints the coefficients to paste into RELEVANCE_MODEL, and
// the table docs/api.md quotes.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Engine, ENGINE_PLUGINS, loadEngineConfig } from '../packages/engine/src/index.ts';
import { loadConversation } from '../packages/engine/bench/locomo.ts';
import { testLocomoDir, testModelDir } from '../packages/engine/bench/test-assets.ts';
import { RELEVANCE_MODEL, RelevanceCap } from '../packages/engine/src/recall/relevance.ts';

const { values } = parseArgs({
  options: {
    fit: { type: 'string', default: 'conv-26,conv-30,conv-41' },
    check: { type: 'string', default: 'conv-42,conv-43' },
    top: { type: 'string', default: '20' },
    data: { type: 'string', default: testLocomoDir() },
  },
});
const TOP = Number(values.top);
const THRESHOLDS = [0.1, 0.2, 0.3, 0.5, 0.7];
/** Ridge on the non-intercept coefficients: keeps Newton's steps finite if the classes separate. */
const RIDGE = 1e-3;

/** The top results of every question of one conversation, as lists of {score, semantic, relevant}. */
async function examples(engine, name) {
  const conv = loadConversation(path.join(values.data, `${name}.json`));
  const bankId = `fit-${name}`;
  const partition = { tenant: 'default', bankId, space: 'default' };
  for (const session of conv.sessions) {
    const items = session.turns.map((t) => ({
      content: t.content,
      timestamp: new Date(session.timestamp),
      context: undefined,
      metadata: { dia_id: t.diaId },
      tags: undefined,
      documentId: session.key,
      entities: undefined,
    }));
    await engine.service.retain({ partition, items, async: false, maxNewMemories: undefined });
  }
  const lists = [];
  for (const q of conv.questions) {
    const result = await engine.service.recall({
      tenant: 'default',
      bankId,
      space: 'default',
      query: q.question,
      maxTokens: 8192,
      budget: 'mid',
      includeOrg: false,
      types: undefined,
      tags: undefined,
      tagsMatch: 'any',
      queryTimestamp: new Date(conv.queryTimestamp),
      trace: false,
    });
    const evidence = new Set(q.evidence);
    lists.push(
      result.memories.slice(0, TOP).map((m) => ({
        score: m.score,
        semantic: m.scores['semantic'] ?? 0,
        relevant: evidence.has(m.metadata['dia_id'] ?? '') ? 1 : 0,
      })),
    );
  }
  console.error(`${name}: ${conv.questions.length} questions`);
  return lists;
}

/** Logistic regression of `relevant` on [1, score, semantic] by Newton's method. */
function fitLogistic(rows) {
  let w = [0, 0, 0];
  for (let iteration = 0; iteration < 50; iteration++) {
    const gradient = [0, 0, 0];
    const hessian = [
      [0, 0, 0],
      [0, 0, 0],
      [0, 0, 0],
    ];
    for (const r of rows) {
      const x = [1, r.score, r.semantic];
      const p = 1 / (1 + Math.exp(-(w[0] * x[0] + w[1] * x[1] + w[2] * x[2])));
      for (let i = 0; i < 3; i++) {
        gradient[i] += (r.relevant - p) * x[i];
        for (let j = 0; j < 3; j++) hessian[i][j] += p * (1 - p) * x[i] * x[j];
      }
    }
    for (let i = 1; i < 3; i++) {
      gradient[i] -= RIDGE * w[i];
      hessian[i][i] += RIDGE;
    }
    const step = solve3(hessian, gradient);
    w = w.map((v, i) => v + step[i]);
    if (Math.max(...step.map(Math.abs)) < 1e-9) break;
  }
  return { intercept: round(w[0]), score: round(w[1]), semantic: round(w[2]) };
}

/** Solves the 3x3 system A x = b (Gaussian elimination with partial pivoting). */
function solve3(A, b) {
  const m = A.map((row, i) => [...row, b[i]]);
  for (let c = 0; c < 3; c++) {
    let pivot = c;
    for (let r = c + 1; r < 3; r++) if (Math.abs(m[r][c]) > Math.abs(m[pivot][c])) pivot = r;
    [m[c], m[pivot]] = [m[pivot], m[c]];
    for (let r = c + 1; r < 3; r++) {
      const f = m[r][c] / m[c][c];
      for (let k = c; k < 4; k++) m[r][k] -= f * m[c][k];
    }
  }
  const x = [0, 0, 0];
  for (let r = 2; r >= 0; r--) {
    let s = m[r][3];
    for (let k = r + 1; k < 3; k++) s -= m[r][k] * x[k];
    x[r] = s / m[r][r];
  }
  return x;
}

/** Precision and recall of "relevance >= t" over lists, with the engine's list cap. */
function measure(lists, model) {
  const totalRelevant = lists.flat().reduce((n, r) => n + r.relevant, 0);
  return THRESHOLDS.map((t) => {
    let kept = 0;
    let hits = 0;
    for (const list of lists) {
      const cap = new RelevanceCap(model);
      for (const r of list) {
        if (cap.next(r.score, r.semantic) < t) break;
        kept++;
        hits += r.relevant;
      }
    }
    return {
      threshold: t,
      kept_per_question: round(kept / lists.length),
      precision: kept === 0 ? null : round(hits / kept),
      recall: round(hits / totalRelevant),
    };
  });
}

function round(n) {
  return Math.round(n * 1e4) / 1e4;
}

const home = mkdtempSync(path.join(tmpdir(), 'mnemos-fit-'));
const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };
const config = loadEngineConfig({ MNEMOS_HOME: home, MNEMOS_API_EMBEDDINGS_LOCAL_MODEL: testModelDir() });
const engine = await Engine.open(config, silent, undefined, ENGINE_PLUGINS);
try {
  const fitLists = [];
  for (const name of values.fit.split(',')) fitLists.push(...(await examples(engine, name)));
  const checkLists = [];
  for (const name of values.check.split(',')) checkLists.push(...(await examples(engine, name)));
  const model = fitLogistic(fitLists.flat());
  const rows = fitLists.flat();
  console.log(
    JSON.stringify(
      {
        fitted_on: values.fit,
        checked_on: values.check,
        top: TOP,
        examples: rows.length,
        relevant_share: round(rows.reduce((n, r) => n + r.relevant, 0) / rows.length),
        model,
        held_out: measure(checkLists, model),
        held_out_with_stored_model: measure(checkLists, RELEVANCE_MODEL),
      },
      null,
      2,
    ),
  );
} finally {
  await engine.close();
  rmSync(home, { recursive: true, force: true });
}
