import { RE2JS } from 're2js';
import { invalidField as invalid } from '@mnemos/problems';

/**
 * The shape of a caller's response_schema as a validator runs it: each subschema is a node, joined to the subschemas
 * it applies to the same value (allOf, not, if, $ref...) and to the values inside it (properties, items...). Checking
 * the graph before compiling refuses, with a 400 naming where, every schema whose check would not end or would cost
 * more than a bound: references outside the schema, references that loop without descending into the value, too many
 * subschemas, and subschemas applied so many times (through shared references) that one answer would take too long.
 */

/** Subschemas a response_schema may hold: compiling takes time in their number (a few hundred microseconds each). */
const MAX_SUBSCHEMAS = 200;
/** How deep the checked answer may nest; the cost bound follows recursive references this deep. */
export const MAX_ANSWER_DEPTH = 32;
/**
 * Steps one answer's check may cost at most. A step is about the cost of comparing a value with one enum value or
 * looking up one property (a few nanoseconds); applying a subschema costs APPLY_STEPS, starting a pattern or format
 * match MATCH_STEPS.
 */
const MAX_CHECK_STEPS = 12_000_000;
const APPLY_STEPS = 8;
const MATCH_STEPS = 120;
/**
 * Pattern work one answer may cost at most, in RE2 instructions times characters: RE2 runs in time linear in the text,
 * but times the size of the pattern's program, so a pattern of a few characters (`(?:[a-z]+\s?){1,40}`) can cost
 * hundreds of milliseconds on a long string.
 */
const MAX_PATTERN_WORK = 4_000_000;
/** A `format` check as a pattern size: the formats are regular expressions of about this cost per character. */
const FORMAT_SIZE = 16;

/** Keywords whose subschemas apply to the value itself. */
const IN_PLACE_LISTS = ['allOf', 'anyOf', 'oneOf'];
const IN_PLACE = ['not', 'if', 'then', 'else'];
const IN_PLACE_MAPS = ['dependentSchemas', 'dependencies'];
/** Keywords whose subschemas apply to one named member: a property, or an item at a position. */
const KEYED_MAPS = ['properties'];
const KEYED_LISTS = ['prefixItems'];
/** Keywords whose subschemas may apply to every member. */
const ANY_MEMBER = [
  'additionalItems',
  'additionalProperties',
  'contains',
  'propertyNames',
  'unevaluatedItems',
  'unevaluatedProperties',
];
const ANY_MEMBER_MAPS = ['patternProperties'];
/** Keywords that only hold subschemas for references to name. */
const DEFINITIONS = ['$defs', 'definitions'];

/** What applying a subschema to one value costs, besides its subschemas. */
interface Cost {
  /** Steps for the value itself: the node, its enum values, required and property names, a pattern's start. */
  steps: number;
  /** Steps for each member of the value (patternProperties tests each key, additionalProperties compares it). */
  stepsPerMember: number;
  /** Pattern program size run over the value's text (a pattern, a format). */
  patternSize: number;
  /** Pattern program size run over each member's key (patternProperties). */
  patternSizePerMember: number;
}

interface SchemaNode {
  pointer: string;
  cost: Cost;
  inPlace: number[];
  /** Where `inPlace[i]` comes from: the `$ref` pointer for a reference, else undefined. */
  inPlaceRef: Array<string | undefined>;
  keyed: Map<string, number[]>;
  anyMember: number[];
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isSchema = (v: unknown): boolean => isObject(v) || typeof v === 'boolean';
const escape = (key: string): string => key.replace(/~/g, '~0').replace(/\//g, '~1');
const count = (v: unknown): number => (Array.isArray(v) ? v.length : isObject(v) ? Object.keys(v).length : 0);

/** The subschema a local reference names, or a 400 saying why it names none. */
function resolve(root: unknown, ref: unknown, at: string, base: string): { value: unknown; pointer: string } {
  const refuse = (why: string) => invalid(at, why);
  if (typeof ref !== 'string') throw refuse('must be a string');
  if (!ref.startsWith('#')) {
    throw refuse(
      `is "${ref.slice(0, 200)}", outside response_schema; only references inside it ("#" or "#/$defs/...") are ` +
        'followed, nothing is fetched: put the referenced schema under $defs',
    );
  }
  if (ref !== '#' && !ref.startsWith('#/')) {
    throw refuse('must be "#" or a JSON pointer such as "#/$defs/name" (anchors are not followed)');
  }
  let value = root;
  let pointer = base;
  for (const raw of ref === '#' ? [] : ref.slice(2).split('/')) {
    let segment: string;
    try {
      segment = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    } catch {
      throw refuse(`has a malformed percent-encoding in "${raw.slice(0, 100)}"`);
    }
    const next: unknown =
      Array.isArray(value) && /^(0|[1-9]\d*)$/.test(segment)
        ? value[Number(segment)]
        : isObject(value) && Object.hasOwn(value, segment)
          ? value[segment]
          : undefined;
    if (next === undefined) throw refuse(`is "${ref.slice(0, 200)}", which names nothing in response_schema`);
    value = next;
    pointer += `/${escape(segment)}`;
  }
  if (!isSchema(value)) throw refuse(`is "${ref.slice(0, 200)}", which names a value that is not a schema`);
  return { value, pointer };
}

/** The size of a pattern's program; a pattern RE2 cannot compile is refused before (response-schema.ts). */
function programSize(pattern: unknown): number {
  if (typeof pattern !== 'string') return 0;
  try {
    return RE2JS.compile(pattern).programSize();
  } catch {
    return 0;
  }
}

function costOf(schema: Record<string, unknown>): Cost {
  const patterns = isObject(schema['patternProperties']) ? Object.keys(schema['patternProperties']) : [];
  const checksText = (schema['pattern'] === undefined ? 0 : 1) + (schema['format'] === undefined ? 0 : 1);
  const names = count(schema['properties']) + patterns.length;
  const additional = schema['additionalProperties'] !== undefined && schema['additionalProperties'] !== true;
  return {
    steps:
      APPLY_STEPS +
      count(schema['enum']) +
      count(schema['required']) +
      count(schema['properties']) +
      count(schema['dependencies']) +
      count(schema['dependentRequired']) +
      checksText * MATCH_STEPS,
    stepsPerMember: patterns.length * MATCH_STEPS + (additional ? names : 0),
    patternSize: programSize(schema['pattern']) + (schema['format'] === undefined ? 0 : FORMAT_SIZE),
    patternSizePerMember: patterns.reduce((sum, pattern) => sum + programSize(pattern), 0),
  };
}

/** Every subschema reachable from the root (and every definition), each once. */
function buildGraph(schema: Record<string, unknown>, base: string): SchemaNode[] {
  const nodes: SchemaNode[] = [];
  const byPointer = new Map<string, number>();
  const pending: Array<{ value: unknown; pointer: string }> = [];
  const nodeOf = (value: unknown, pointer: string): number => {
    const known = byPointer.get(pointer);
    if (known !== undefined) return known;
    if (nodes.length >= MAX_SUBSCHEMAS) {
      throw invalid(base, `has more than ${MAX_SUBSCHEMAS.toLocaleString('en')} subschemas; send a smaller schema`);
    }
    const index = nodes.length;
    byPointer.set(pointer, index);
    const cost = { steps: APPLY_STEPS, stepsPerMember: 0, patternSize: 0, patternSizePerMember: 0 };
    nodes.push({ pointer, cost, inPlace: [], inPlaceRef: [], keyed: new Map(), anyMember: [] });
    pending.push({ value, pointer });
    return index;
  };
  nodeOf(schema, base);
  while (pending.length > 0) {
    const { value, pointer } = pending.pop()!;
    const node = nodes[byPointer.get(pointer)!]!;
    if (!isObject(value)) continue;
    const child = (v: unknown, at: string): number | undefined => (isSchema(v) ? nodeOf(v, at) : undefined);
    const each = (v: unknown, at: string, use: (index: number, key: string) => void): void => {
      if (!isObject(v) && !Array.isArray(v)) return;
      for (const [key, member] of Object.entries(v)) {
        const index = child(member, `${at}/${escape(key)}`);
        if (index !== undefined) use(index, key);
      }
    };
    const inPlace = (index: number | undefined, ref?: string): void => {
      if (index === undefined) return;
      node.inPlace.push(index);
      node.inPlaceRef.push(ref);
    };
    const anyMember = (index: number | undefined): void => {
      if (index !== undefined) node.anyMember.push(index);
    };
    for (const [key, v] of Object.entries(value)) {
      const at = `${pointer}/${escape(key)}`;
      if (key === '$id') {
        throw invalid(
          at,
          'names the schema by URI; response_schema is checked on its own, so it may not declare $id: remove it ' +
            '(name parts under $defs and refer to them with "#/$defs/...")',
        );
      }
      if (key === '$ref') {
        const target = resolve(schema, v, at, base);
        inPlace(nodeOf(target.value, target.pointer), at);
      } else if (IN_PLACE.includes(key)) inPlace(child(v, at));
      else if (IN_PLACE_LISTS.includes(key) || IN_PLACE_MAPS.includes(key)) each(v, at, (i) => inPlace(i));
      else if (ANY_MEMBER.includes(key)) anyMember(child(v, at));
      else if (ANY_MEMBER_MAPS.includes(key)) each(v, at, (i) => anyMember(i));
      else if (KEYED_MAPS.includes(key) || KEYED_LISTS.includes(key) || (key === 'items' && Array.isArray(v))) {
        each(v, at, (i, member) => node.keyed.set(member, [...(node.keyed.get(member) ?? []), i]));
      } else if (key === 'items') anyMember(child(v, at));
      else if (DEFINITIONS.includes(key)) each(v, at, () => undefined);
    }
    Object.assign(node.cost, costOf(value));
  }
  return nodes;
}

/**
 * The nodes in an order where every node comes after the nodes it applies in place; a loop of in-place applications
 * (a reference back to itself without descending into the value) is a 400 naming the reference that closes it.
 */
function inPlaceOrder(nodes: SchemaNode[]): number[] {
  const state = new Uint8Array(nodes.length); // 0 unseen, 1 on the path, 2 done
  const order: number[] = [];
  for (let start = 0; start < nodes.length; start++) {
    if (state[start] !== 0) continue;
    const path: Array<{ node: number; next: number }> = [{ node: start, next: 0 }];
    state[start] = 1;
    while (path.length > 0) {
      const top = path[path.length - 1]!;
      const node = nodes[top.node]!;
      if (top.next === node.inPlace.length) {
        state[top.node] = 2;
        order.push(top.node);
        path.pop();
        continue;
      }
      const target = node.inPlace[top.next++]!;
      if (state[target] === 1) throw loopProblem(nodes, path, target);
      if (state[target] === 0) {
        state[target] = 1;
        path.push({ node: target, next: 0 });
      }
    }
  }
  return order;
}

function loopProblem(nodes: SchemaNode[], path: Array<{ node: number; next: number }>, target: number) {
  // The loop runs from `target` along the path (each step took its edge `next - 1`) back to `target`; it holds at
  // least one reference (the subschemas themselves form a tree), and the problem names the first.
  const loop = path.slice(path.findIndex((step) => step.node === target));
  const ref = loop.map((step) => nodes[step.node]!.inPlaceRef[step.next - 1]).find((r) => r !== undefined);
  return invalid(
    ref ?? nodes[target]!.pointer,
    `leads back to ${nodes[target]!.pointer} without descending into a property or an item, so checking an answer ` +
      'against it would never end; a schema may refer to itself only from inside properties, items or ' +
      'additionalProperties',
  );
}

/** The most one value can cost (at any depth), and the total over the answer, for one kind of cost. */
interface Bound {
  /** The most one value at one depth of the answer can cost. */
  perValue: number;
  /** The whole answer's cost, for an answer of `values` values. */
  total: number;
}

/**
 * An upper bound of what checking one answer costs, in one kind of cost (`own`: for the value a subschema applies
 * to, `perMember`: for each of that value's members). For each depth of the answer: `all`, the most one value at
 * that depth can cost; `anyMember`, the same counting only applications reached through a keyword that applies to
 * every member (items, additionalProperties...), which may reach every value of the answer; `named`, the total of the
 * applications reached through named members only, each of which reaches one value. The answer holds at most
 * `values` values, so checking it costs at most the smaller of `values × max(all)` and
 * `sum(named) + values × max(anyMember)`.
 */
function bound(
  nodes: SchemaNode[],
  order: number[],
  values: number,
  own: (cost: Cost) => number,
  perMember: (cost: Cost) => number,
): Bound {
  const layer = () => ({
    all: new Float64Array(nodes.length),
    anyMember: new Float64Array(nodes.length),
    named: new Float64Array(nodes.length),
  });
  let previous = layer();
  let maxAll = 0;
  let maxAnyMember = 0;
  let namedTotal = 0;
  for (let depth = 0; depth <= MAX_ANSWER_DEPTH; depth++) {
    const current = layer();
    for (const index of order) {
      const node = nodes[index]!;
      let all = depth === 0 ? own(node.cost) : 0;
      let anyMember = 0;
      let named = all;
      for (const c of node.inPlace) {
        all += current.all[c]!;
        anyMember += current.anyMember[c]!;
        named += current.named[c]!;
      }
      if (depth > 0) {
        let mostAll = 0;
        let mostAnyMember = 0;
        for (const members of node.keyed.values()) {
          let memberAll = 0;
          let memberAnyMember = 0;
          for (const c of members) {
            memberAll += previous.all[c]!;
            memberAnyMember += previous.anyMember[c]!;
            named += previous.named[c]!;
          }
          mostAll = Math.max(mostAll, memberAll);
          mostAnyMember = Math.max(mostAnyMember, memberAnyMember);
        }
        let reached = depth === 1 ? perMember(node.cost) : 0;
        for (const c of node.anyMember) reached += previous.all[c]!;
        all += mostAll + reached;
        anyMember += mostAnyMember + reached;
      }
      current.all[index] = all;
      current.anyMember[index] = anyMember;
      current.named[index] = named;
    }
    maxAll = Math.max(maxAll, current.all[0]!);
    maxAnyMember = Math.max(maxAnyMember, current.anyMember[0]!);
    namedTotal += current.named[0]!;
    previous = current;
  }
  return { perValue: maxAll, total: Math.min(values * maxAll, namedTotal + values * maxAnyMember) };
}

const figure = (n: number): string => Math.round(n).toLocaleString('en');

/**
 * Refuses a response_schema (at `base`) whose check could not end or would cost more than the bounds, for an answer
 * of at most `answerChars` characters of JSON, naming where.
 */
export function checkSchemaGraph(schema: Record<string, unknown>, base: string, answerChars: number): void {
  const nodes = buildGraph(schema, base);
  const order = inPlaceOrder(nodes);
  // Every value takes a character and a separator.
  const steps = bound(
    nodes,
    order,
    answerChars / 2,
    (c) => c.steps,
    (c) => c.stepsPerMember,
  );
  if (steps.total > MAX_CHECK_STEPS) {
    throw invalid(
      base,
      `could take about ${figure(steps.total)} steps to check one answer, more than the ${figure(MAX_CHECK_STEPS)} ` +
        'allowed: every item of an array (and every value under additionalProperties) is checked against its whole ' +
        'subschema, references included; use fewer subschemas, enum values or shared references there',
    );
  }
  // A value's text is at most the whole answer, and all the texts together too.
  const patterns = bound(
    nodes,
    order,
    1,
    (c) => c.patternSize,
    (c) => c.patternSizePerMember,
  );
  if (patterns.perValue * answerChars > MAX_PATTERN_WORK) {
    throw invalid(
      base,
      `applies patterns (or formats) of ${figure(patterns.perValue)} RE2 instructions in all to one value, more ` +
        `than the ${figure(MAX_PATTERN_WORK / answerChars)} an answer of ${figure(answerChars)} characters allows ` +
        '(a pattern runs in time proportional to its size times the text); use fewer or simpler patterns, with ' +
        'smaller repetition counts',
    );
  }
}
