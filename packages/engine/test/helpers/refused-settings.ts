import assert from 'node:assert/strict';
import { it } from 'node:test';
import { ConfigError, loadEngineConfig } from '../../src/index.js';

/** A setting's value that must stop the engine at start, and what the one-line reason must say. */
export type RefusedSetting = [variable: string, value: string, reason: RegExp];

/**
 * One test per value: loading the configuration refuses it in one line that starts with the variable, quotes the
 * value and gives the reason.
 */
export function itRefusesAtStart(refused: readonly RefusedSetting[]): void {
  for (const [variable, value, reason] of refused) {
    it(`refuses ${variable}=${value} at start, in one line naming it`, () => {
      assert.throws(
        () => loadEngineConfig({ [variable]: value }),
        (e: unknown) =>
          e instanceof ConfigError &&
          e.message.startsWith(variable) &&
          reason.test(e.message) &&
          e.message.includes(JSON.stringify(value)) &&
          !e.message.includes('\n'),
      );
    });
  }
}
