import { closest, distance } from 'fastest-levenshtein';
import { engineEnvSchema, OTHER_MNEMOS_PREFIXES, OTHER_MNEMOS_VARIABLES } from './schema.js';

/** Every MNEMOS_* name something in this package reads. */
const KNOWN = [...Object.keys(engineEnvSchema.shape), ...OTHER_MNEMOS_VARIABLES];

/**
 * One warning per MNEMOS_* variable nothing reads (a mistyped setting is otherwise silently ignored), naming the
 * closest valid name when it is a plausible typo.
 */
export function unknownVariableWarnings(env: Record<string, string | undefined>): string[] {
  return Object.keys(env)
    .filter((name) => name.startsWith('MNEMOS_') && !KNOWN.includes(name))
    .filter((name) => !OTHER_MNEMOS_PREFIXES.some((prefix) => name.startsWith(prefix)))
    .sort()
    .map((name) => {
      const guess = closest(name, KNOWN);
      // A quarter of the name's length in edits still reads as a typo of it; further away, the guess would mislead.
      const hint = distance(name, guess) <= Math.max(2, Math.floor(name.length / 4)) ? `; did you mean ${guess}?` : '';
      return `${name} is not a Mnemos setting and is ignored${hint} (the settings are listed in the README).`;
    });
}
