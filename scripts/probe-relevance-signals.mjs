#!/usr/bin/env node
// Measures whether signals beyond the cosine and the coverage would let recall's relevance rate a plain paraphrase
// high without rating unrelated memories high too (docs/decisions.md, "Relevance stays on the cosine and the
// coverage"). Every signal is computed from the query and one memory alone, as relevance must be.
//
//   node --conditions=source --import tsx scripts/fit-relevance.mjs --examples /tmp/relevance-examples.json
//   node --conditions=source --import tsx scripts/probe-relevance-signals.mjs /tmp/relevance-examples.json
//   ... --agent-weight 1 (the agent facts' weight in the fit, LoCoMo's being 1)
//
// The signals, beside the engine's cosine (scores.semantic) and coverage (scores.coverage):
// - subject-free cosine: the cosine between the query with the names it mentions taken out (mentions.ts; "Where
//   does Alice live?" -> "Where does live?") and the memory, so that sharing the subject no longer counts as meaning;
// - answer type: the query asks for a place, a time, a person or a number (its first words), and the memory holds one
//   that the query does not (a capitalised word after in/to/at/from/near, a date or time word, another name, a
//   number).
// Each feature set is fitted as fit-relevance.mjs fits the engine's (same parts, LoCoMo and agent facts weighted
// equally) and measured on the held-out parts with the list cap; the docs' example ("Alice: I moved to Lisbon in
// May." for "Where does Alice live?", coverage 0.5: `alice` of `alice` and `live`) is scored by each. It also counts
// the answers among the examples where a type is asked and held or not, and near the docs' example's signals.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { createLocalEmbedder } from '../packages/engine/src/embeddings/local.ts';
import { mentionsOf } from '../packages/engine/src/memory/mentions.ts';
import { round6 } from '../packages/engine/src/recall/candidate.ts';
import { testModelDir } from '../packages/engine/bench/test-assets.ts';
import { fitLogistic, logistic, measure, round, weighted } from './relevance-math.mjs';

const { values, positionals } = parseArgs({
  options: { 'agent-weight': { type: 'string', default: '1' } },
  allowPositionals: true,
});
const examples = JSON.parse(readFileSync(positionals[0] ?? '/tmp/relevance-examples.json', 'utf8'));
const SIZES = Object.keys(examples.agent);
const parts = {
  locomoFit: examples.locomoFit,
  locomoCheck: examples.locomoCheck,
  agentFit: SIZES.flatMap((s) => examples.agent[s].fit),
  agentCheck: SIZES.flatMap((s) => examples.agent[s].check),
};
const ALICE = { query: 'Where does Alice live?', text: 'Alice: I moved to Lisbon in May.', coverage: 0.5 };

const SPEAKER_PREFIX = /^([^:\n]{1,40}):\s/u;
const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/gu, '\\$&');
/** The names a query mentions, without a possessive "'s". */
const namesIn = (query) => [...new Set(mentionsOf(query, {}).map((m) => m.name.replace(/['’]s$/u, '')))];
/** The text without the names (and their possessive), collapsed spaces. */
function withoutNames(text, names) {
  let out = text;
  for (const n of names)
    out = out.replace(new RegExp(`(?<![\\p{L}\\p{N}])${escape(n)}(['’]s)?(?![\\p{L}\\p{N}])`, 'giu'), '');
  return out.replace(/\s+/gu, ' ').trim();
}

const CALENDAR =
  'january|february|march|april|may|june|july|august|september|october|november|december|monday|tuesday|wednesday|thursday|friday|saturday|sunday';
/** What the query asks for, by its first words; undefined for anything else (what, which, how, yes/no). */
function askedType(query) {
  const q = query.trim().toLowerCase();
  if (/^(where|which (city|country|place|town|region))\b/u.test(q)) return 'place';
  if (/^(when|what (time|date|day|year|month)|how long ago)\b/u.test(q)) return 'time';
  if (/^(who|whom|whose)\b/u.test(q)) return 'person';
  if (/^how (many|much|old|often)\b/u.test(q)) return 'number';
  return undefined;
}
/** Whether the memory (its speaker prefix left out) holds something of that type the query does not name. */
function holdsType(text, type, query) {
  const body = text.replace(SPEAKER_PREFIX, '');
  const named = new Set(namesIn(query).map((n) => n.toLowerCase()));
  const fresh = (word) => !named.has(word.toLowerCase().replace(/['’]s$/u, ''));
  switch (type) {
    case 'place':
      return [...body.matchAll(/\b(?:in|to|at|from|near)\s+(?:the\s+)?(\p{Lu}[\p{L}'’.-]*)/gu)].some(
        (m) => fresh(m[1]) && !new RegExp(`^(${CALENDAR})$`, 'iu').test(m[1]),
      );
    case 'time':
      return new RegExp(
        `\\b(\\d{1,2}(:\\d\\d)?\\s?(am|pm)|\\d{4}|yesterday|today|tomorrow|last (week|month|year|night)|ago|next (week|month|year)|every|weekend|morning|evening|night|${CALENDAR})\\b`,
        'iu',
      ).test(body);
    case 'person':
      return [...body.matchAll(/(?<=\p{L}[^.!?]*\s)(\p{Lu}[\p{L}'’-]+)/gu)].some((m) => fresh(m[1]));
    case 'number':
      return /\d|\b(one|two|three|four|five|six|seven|eight|nine|ten|once|twice|every|daily|weekly|monthly)\b/iu.test(
        body,
      );
    default:
      return false;
  }
}

const rows = Object.values(parts).flat(2);
const texts = new Set([ALICE.query, ALICE.text, withoutNames(ALICE.query, namesIn(ALICE.query))]);
for (const r of rows) {
  texts.add(r.text);
  texts.add(withoutNames(r.query, namesIn(r.query)));
}
const embedder = await createLocalEmbedder({ model: testModelDir(), cacheDir: '/tmp', dtype: 'fp32', log: () => {} });
const vectors = new Map();
const list = [...texts];
for (let i = 0; i < list.length; i += 64) {
  const batch = list.slice(i, i + 64);
  (await embedder.embed(batch, 'document')).forEach((v, j) => vectors.set(batch[j], v));
}
await embedder.close();
const dot = (a, b) => a.reduce((s, v, i) => s + v * b[i], 0);

/** The signals of one example (its query and memory), beside the engine's cosine and coverage. */
function signals(r) {
  const type = askedType(r.query);
  return {
    ...r,
    subjectFree: dot(vectors.get(withoutNames(r.query, namesIn(r.query))), vectors.get(r.text)),
    asks: type ? 1 : 0,
    typeMatch: type && holdsType(r.text, type, r.query) ? 1 : 0,
  };
}
const withSignals = Object.fromEntries(Object.entries(parts).map(([k, v]) => [k, v.map((l) => l.map(signals))]));
const alice = signals({ ...ALICE, semantic: dot(vectors.get(ALICE.query), vectors.get(ALICE.text)) });

const engine = (r) => [r.semantic, r.coverage, r.semantic ** 2, r.semantic * r.coverage];
const FEATURE_SETS = {
  'cosine and coverage (the engine today)': engine,
  '+ subject-free cosine': (r) => [...engine(r), r.subjectFree],
  '+ answer type': (r) => [...engine(r), r.typeMatch, r.asks],
  '+ both': (r) => [...engine(r), r.subjectFree, r.typeMatch, r.asks],
  '+ both, type match times subject-free cosine': (r) => [
    ...engine(r),
    r.subjectFree,
    r.typeMatch,
    r.asks,
    r.typeMatch * r.subjectFree,
  ],
};
const agentWeight = Number(values['agent-weight']);
const measured = (lists, w, features) =>
  measure(lists, () => {
    let cap = 1;
    return (r) => (cap = Math.min(cap, round6(logistic([1, ...features(r)], w))));
  });
/** Of the examples (fit and held-out parts), how many are answers, overall and among those `keep` keeps. */
function share(lists, keep) {
  const kept = lists.flat().filter(keep);
  return { results: kept.length, answers: kept.reduce((n, r) => n + r.relevant, 0) };
}
const near = (r) => r.semantic >= 0.55 && r.semantic < 0.75 && r.coverage >= 0.3 && r.coverage < 0.7;
const counts = (lists) => ({
  type_asked_and_held: share(lists, (r) => r.asks === 1 && r.typeMatch === 1),
  type_asked_not_held: share(lists, (r) => r.asks === 1 && r.typeMatch === 0),
  near_the_docs_example_type_held: share(lists, (r) => near(r) && r.typeMatch === 1),
});
const report = {
  docs_example: { ...ALICE, cosine: round(alice.semantic), subject_free_cosine: round(alice.subjectFree) },
  locomo: counts([...withSignals.locomoFit, ...withSignals.locomoCheck]),
  agent_facts: counts([...withSignals.agentFit, ...withSignals.agentCheck]),
  feature_sets: {},
};
for (const [name, features] of Object.entries(FEATURE_SETS)) {
  const fitRows = [...weighted(withSignals.locomoFit, 1), ...weighted(withSignals.agentFit, agentWeight)];
  const w = fitLogistic(fitRows, features);
  report.feature_sets[name] = {
    coefficients: w,
    docs_example_relevance: round(logistic([1, ...features(alice)], w)),
    locomo_held_out: measured(withSignals.locomoCheck, w, features),
    agent_facts_held_out: measured(withSignals.agentCheck, w, features),
  };
}
console.log(JSON.stringify(report, null, 2));
