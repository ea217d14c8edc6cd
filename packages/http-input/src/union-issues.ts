/**
 * A value that matches none of a union's choices (`anyOf`) fails each choice on its own, and Ajv reports every one of
 * those failures before the union's: `{"budget": "huge"}` gave seven errors, none naming what is allowed. This folds
 * them into one error at the union's place that lists the choices.
 */

interface UnionIssue {
  instancePath: string;
  keyword: string;
  parentSchema?: unknown;
}

interface ChoiceSchema {
  const?: unknown;
  enum?: unknown[];
  type?: unknown;
  minimum?: unknown;
  maximum?: unknown;
  anyOf?: ChoiceSchema[];
}

/** Words for one choice of a union ("low", "an integer from 1 to 5000", "null"), or undefined when it has none. */
function describeChoice(schema: ChoiceSchema): string[] | undefined {
  if (schema.anyOf !== undefined) return describeChoices(schema.anyOf);
  if ('const' in schema) return [JSON.stringify(schema.const)];
  if (Array.isArray(schema.enum)) return schema.enum.map((value) => JSON.stringify(value));
  if (schema.type === 'integer' || schema.type === 'number') {
    const kind = schema.type === 'integer' ? 'an integer' : 'a number';
    if (typeof schema.minimum === 'number' && typeof schema.maximum === 'number') {
      return [`${kind} from ${schema.minimum} to ${schema.maximum}`];
    }
    return [kind];
  }
  if (schema.type === 'null') return ['null'];
  if (schema.type === 'string') return ['a string'];
  if (schema.type === 'boolean') return ['true or false'];
  if (schema.type === 'array') return ['a list'];
  if (schema.type === 'object') return ['an object'];
  return undefined;
}

/** Whether a choice lists values (a const or an enum), which reads as "one of ...". */
function namesValues(schema: ChoiceSchema): boolean {
  return 'const' in schema || Array.isArray(schema.enum) || (schema.anyOf?.some(namesValues) ?? false);
}

function describeChoices(choices: ChoiceSchema[]): string[] | undefined {
  const words: string[] = [];
  for (const choice of choices) {
    const described = describeChoice(choice);
    if (described === undefined) return undefined;
    words.push(...described);
  }
  return words;
}

/**
 * "must be one of "low", "mid", "high", an integer from 1 to 5000 or null" ("one of" where it lists values), or
 * undefined for a union whose choices have no words here.
 */
function unionDetail(schema: unknown): string | undefined {
  const choices = (schema as ChoiceSchema | undefined)?.anyOf;
  if (choices === undefined) return undefined;
  const words = describeChoices(choices);
  if (words === undefined || words.length === 0) return undefined;
  const listed = words.length === 1 ? words[0]! : `${words.slice(0, -1).join(', ')} or ${words[words.length - 1]!}`;
  return `must be ${choices.some(namesValues) ? 'one of ' : ''}${listed}`;
}

/**
 * The issues with each failed union's choices folded into one issue, whose `detail` names the choices. Ajv reports a
 * union's own failure after its choices' (and an outer union after an inner one), so the last union issue at a place
 * stands for all the issues at that place.
 */
export function foldUnionIssues<T extends UnionIssue>(issues: T[]): Array<T & { detail?: string }> {
  const outerUnion = new Map<string, T>();
  for (const issue of issues) {
    if (issue.keyword === 'anyOf' && unionDetail(issue.parentSchema) !== undefined) {
      outerUnion.set(issue.instancePath, issue);
    }
  }
  if (outerUnion.size === 0) return issues;
  const folded: Array<T & { detail?: string }> = [];
  const placed = new Set<string>();
  for (const issue of issues) {
    const union = outerUnion.get(issue.instancePath);
    if (union === undefined) {
      folded.push(issue);
    } else if (!placed.has(issue.instancePath)) {
      placed.add(issue.instancePath);
      folded.push({ ...union, detail: unionDetail(union.parentSchema) });
    }
  }
  return folded;
}
