/** Deterministic synthetic memories and queries for benchmarks (no external data). */

const PEOPLE = [
  'Alice',
  'Bruno',
  'Chen',
  'Dara',
  'Emeka',
  'Farah',
  'Goran',
  'Hana',
  'Ivan',
  'Jia',
  'Kofi',
  'Lena',
  'Mateo',
  'Nadia',
  'Omar',
  'Priya',
];
const VERBS = [
  'visited',
  'cooked',
  'painted',
  'repaired',
  'studied',
  'bought',
  'sold',
  'photographed',
  'described',
  'planned',
  'cleaned',
  'borrowed',
];
const THINGS = [
  'a red bicycle',
  'the old lighthouse',
  'a sourdough loaf',
  'the garden shed',
  'a jazz record',
  'the mountain trail',
  'a chess set',
  'the harbour market',
  'a wool sweater',
  'the science museum',
  'a paper kite',
  'the village bakery',
  'a violin',
  'the rooftop terrace',
  'a vintage camera',
  'the river ferry',
];
const WHEN = [
  'on Monday',
  'last weekend',
  'in early spring',
  'after work',
  'during the holidays',
  'before breakfast',
  'at midnight',
  'in the rain',
  'with friends',
  'for the first time',
];
const WHY = [
  'because it was on sale',
  'to surprise a friend',
  'for a school project',
  'after reading about it',
  'to relax',
  'as a birthday gift',
  'to learn something new',
  'for the neighbours',
];

export function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = <T>(r: () => number, list: readonly T[]): T => list[Math.floor(r() * list.length)]!;

export function memoryText(r: () => number, i: number): string {
  return `${pick(r, PEOPLE)} ${pick(r, VERBS)} ${pick(r, THINGS)} ${pick(r, WHEN)} ${pick(r, WHY)} (note ${i}).`;
}

export function queryText(r: () => number): string {
  return `What did ${pick(r, PEOPLE)} do with ${pick(r, THINGS)}?`;
}
