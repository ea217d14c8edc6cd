#!/usr/bin/env node
// Fits the coefficients of recall's relevance figure (packages/engine/src/recall/relevance.ts) on LoCoMo and on small
// banks of agent-style facts, and measures what a threshold on it means on held-out parts of both.
//
//   node --conditions=source --import tsx scripts/fit-relevance.mjs
//   ... --fit conv-26,conv-30,conv-41 --check conv-42,conv-43 --top 20 --data <LoCoMo folder>
//   ... --agent-weight 1 (the agent facts' weight in the fit, LoCoMo's being 1)
//   ... --examples <file> (writes every example with its query and text: what probe-relevance-signals.mjs reads)
//
// It opens an engine in-process (a fresh temporary MNEMOS_HOME, the local model, no LLM).
// - LoCoMo: each conversation is retained as the LoCoMo bench does (one memory per turn, "Speaker: text",
//   metadata.dia_id) and every category 1-4 question is recalled; a top result is relevant when it is one of the turns
//   the question cites as evidence.
// - Agent facts (packages/engine/bench/agent-facts.json): the facts are spread over banks of 1, 5 and 20 memories
//   (fact i goes to bank i mod 60, i mod 12 and i mod 3), one retain call per fact, and every question is recalled in
//   every bank; a result is relevant when it is one of the facts the question is labelled with. Most banks do not hold
//   the answer, which is what a threshold is for. Questions at even positions fit, odd ones check.
// Each top result is an example: its cosine to the query (scores.semantic) and the share of the query's terms it holds
// (scores.coverage), with the cosine squared and their product (relevanceFeatures). A logistic regression (Newton's
// method, a small ridge; relevance-math.mjs) is fitted on the fit parts, the two data sets weighted equally; the check
// parts measure, with the list cap the engine applies, the precision and recall of "relevance >= t" for a few
// thresholds t. It prints the coefficients to paste into RELEVANCE_MODEL and the tables
// docs/api.md quotes.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Engine, ENGINE_PLUGINS, loadEngineConfig } from '../packages/engine/src/index.ts';
import { loadConversation } from '../packages/engine/bench/locomo.ts';
import { testLocomoDir, testModelDir } from '../packages/engine/bench/test-assets.ts';
import {
  RELEVANCE_MODEL,
  RelevanceCap,
  relevanceFeatures,
  relevanceOf,
} from '../packages/engine/src/recall/relevance.ts';
import { fitLogistic, measure, round, weighted } from './relevance-math.mjs';

const { values } = parseArgs({
  options: {
    fit: { type: 'string', default: 'conv-26,conv-30,conv-41' },
    check: { type: 'string', default: 'conv-42,conv-43' },
    top: { type: 'string', default: '20' },
    data: { type: 'string', default: testLocomoDir() },
    'agent-weight': { type: 'string', default: '1' },
    examples: { type: 'string' },
  },
});
const TOP = Number(values.top);
const AGENT_BANK_SIZES = [1, 5, 20];
const FACTS = path.join(path.dirname(fileURLToPath(import.meta.url)), '../packages/engine/bench/agent-facts.json');

function recallRequest(bankId, query, queryTimestamp) {
  return {
    tenant: 'default',
    bankId,
    space: 'default',
    query,
    maxTokens: 8192,
    budget: 'mid',
    includeOrg: false,
    types: undefined,
    tags: undefined,
    tagsMatch: 'any',
    queryTimestamp,
    trace: false,
  };
}

/** A result as an example: the two signals relevance is fitted on, and its label. */
function example(memory, relevant, query) {
  return {
    semantic: memory.scores['semantic'] ?? 0,
    coverage: memory.scores['coverage'] ?? 0,
    relevant: relevant ? 1 : 0,
    query,
    text: memory.memory.text,
  };
}

/** The top results of every question of one LoCoMo conversation, as lists of examples. */
async function locomoLists(engine, name) {
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
    const result = await engine.service.recall(recallRequest(bankId, q.question, new Date(conv.queryTimestamp)));
    const evidence = new Set(q.evidence);
    lists.push(
      result.hits.slice(0, TOP).map((m) => example(m, evidence.has(m.memory.metadata['dia_id'] ?? ''), q.question)),
    );
  }
  console.error(`${name}: ${conv.questions.length} questions`);
  return lists;
}

/**
 * The agent facts in banks of each size, every question recalled in every bank: `{fit, check}` lists per bank size,
 * and the uncapped relevance of each answer fact per bank size (the same memory and question in every size).
 */
async function agentLists(engine, model) {
  const { facts, questions } = JSON.parse(readFileSync(FACTS, 'utf8'));
  const bySize = {};
  const answerRelevance = new Map();
  for (const size of AGENT_BANK_SIZES) {
    const banks = facts.length / size;
    for (const [i, fact] of facts.entries()) {
      const partition = { tenant: 'default', bankId: `agent-${size}-${i % banks}`, space: 'default' };
      const item = {
        content: fact.text,
        timestamp: undefined,
        context: undefined,
        metadata: { fact: fact.id },
        tags: undefined,
        documentId: undefined,
        entities: undefined,
      };
      await engine.service.retain({ partition, items: [item], async: false, maxNewMemories: undefined });
    }
    const parts = { fit: [], check: [] };
    for (const [qi, q] of questions.entries()) {
      const answers = new Set(q.answers);
      for (let b = 0; b < banks; b++) {
        const result = await engine.service.recall(recallRequest(`agent-${size}-${b}`, q.question, new Date()));
        const list = result.hits
          .slice(0, TOP)
          .map((m) => example(m, answers.has(m.memory.metadata['fact'] ?? ''), q.question));
        (qi % 2 === 0 ? parts.fit : parts.check).push(list);
        for (const [ri, m] of result.hits.entries()) {
          if (!answers.has(m.memory.metadata['fact'] ?? '')) continue;
          const key = `${qi} ${m.memory.metadata['fact']}`;
          const seen = answerRelevance.get(key) ?? {};
          seen[size] = { relevance: relevanceOf(list[ri]?.semantic ?? 0, list[ri]?.coverage ?? 0, model), rank: ri };
          answerRelevance.set(key, seen);
        }
      }
    }
    bySize[size] = parts;
    console.error(`agent facts: banks of ${size}, ${questions.length} questions in ${banks} banks`);
  }
  return { bySize, answerRelevance };
}

/** The logistic's coefficients, named as RelevanceModel names them. */
function fitModel(rows) {
  const [intercept, semantic, coverage, semanticSquared, semanticCoverage] = fitLogistic(rows, (r) =>
    relevanceFeatures(r.semantic, r.coverage),
  );
  return { intercept, semantic, coverage, semanticSquared, semanticCoverage };
}

/** Precision and recall of "relevance >= t" over lists, with the engine's list cap. */
function measureModel(lists, model) {
  return measure(lists, () => {
    const cap = new RelevanceCap(model);
    return (r) => cap.next(r.semantic, r.coverage);
  });
}

/** How far apart the answer facts' relevance is between bank sizes, where the answer ranked first in every size. */
function sizeSpread(answerRelevance) {
  let compared = 0;
  let widest = 0;
  for (const seen of answerRelevance.values()) {
    const sizes = AGENT_BANK_SIZES.filter((s) => seen[s] !== undefined);
    if (sizes.length < AGENT_BANK_SIZES.length) continue;
    compared++;
    const r = sizes.map((s) => seen[s].relevance);
    widest = Math.max(widest, Math.max(...r) - Math.min(...r));
  }
  return { answers_compared: compared, widest_relevance_gap: round(widest) };
}

const home = mkdtempSync(path.join(tmpdir(), 'mnemos-fit-'));
const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };
const config = loadEngineConfig({ MNEMOS_HOME: home, MNEMOS_API_EMBEDDINGS_LOCAL_MODEL: testModelDir() });
const engine = await Engine.open(config, silent, undefined, ENGINE_PLUGINS);
try {
  const locomoFit = [];
  for (const name of values.fit.split(',')) locomoFit.push(...(await locomoLists(engine, name)));
  const locomoCheck = [];
  for (const name of values.check.split(',')) locomoCheck.push(...(await locomoLists(engine, name)));
  const agent = await agentLists(engine, RELEVANCE_MODEL);
  const agentFit = AGENT_BANK_SIZES.flatMap((s) => agent.bySize[s].fit);
  const agentCheck = (s) => agent.bySize[s].check;
  const locomoRows = weighted(locomoFit, 1);
  const model = fitModel([...locomoRows, ...weighted(agentFit, Number(values['agent-weight']))]);
  if (values.examples) {
    const bySize = Object.fromEntries(AGENT_BANK_SIZES.map((s) => [s, agent.bySize[s]]));
    writeFileSync(values.examples, JSON.stringify({ locomoFit, locomoCheck, agent: bySize }));
  }
  const report = (m) => ({
    locomo_held_out: measureModel(locomoCheck, m),
    agent_facts_held_out: measureModel(
      AGENT_BANK_SIZES.flatMap((s) => agentCheck(s)),
      m,
    ),
    agent_facts_held_out_by_bank_size: Object.fromEntries(
      AGENT_BANK_SIZES.map((s) => [s, measureModel(agentCheck(s), m)]),
    ),
  });
  console.log(
    JSON.stringify(
      {
        fitted_on: { locomo: values.fit, agent_facts: 'even questions, banks of 1, 5 and 20' },
        checked_on: { locomo: values.check, agent_facts: 'odd questions, banks of 1, 5 and 20' },
        top: TOP,
        examples: { locomo: locomoRows.length, agent_facts: agentFit.flat().length },
        relevant_share: {
          locomo: round(locomoFit.flat().reduce((n, r) => n + r.relevant, 0) / locomoRows.length),
          agent_facts: round(agentFit.flat().reduce((n, r) => n + r.relevant, 0) / agentFit.flat().length),
        },
        model,
        fitted: report(model),
        stored_model: report(RELEVANCE_MODEL),
        answer_relevance_across_bank_sizes_with_stored_model: sizeSpread(agent.answerRelevance),
      },
      null,
      2,
    ),
  );
} finally {
  await engine.close();
  rmSync(home, { recursive: true, force: true });
}
