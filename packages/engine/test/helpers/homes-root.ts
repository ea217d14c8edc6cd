import { tmpdir } from 'node:os';

/**
 * Where test homes are made: MNEMOS_TEST_HOMES when set (run-tests.mjs points it at a folder in memory for its run),
 * else the temporary folder.
 */
export function testHomesRoot(): string {
  return process.env.MNEMOS_TEST_HOMES ?? tmpdir();
}
