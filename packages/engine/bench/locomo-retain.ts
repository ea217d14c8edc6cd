import type { JsonAnswer } from './http-json.js';

/** Turns per retain request in the LoCoMo throughput run: about one LoCoMo session. */
export const TURNS_PER_REQUEST = 32;
/** Retain requests in flight at once in the LoCoMo throughput run. */
export const REQUESTS_IN_FLIGHT = 2;

/**
 * The LoCoMo retain throughput run of `npm run bench`: `turns` retained into the bank at `url` in order, in requests of
 * TURNS_PER_REQUEST, REQUESTS_IN_FLIGHT at a time. Answers the turns retained per second.
 */
export async function retainTurnsInSessions(
  post: (url: string, body: unknown) => Promise<JsonAnswer>,
  url: string,
  turns: readonly string[],
): Promise<number> {
  const started = performance.now();
  const inFlight: Array<Promise<unknown>> = [];
  for (let i = 0; i < turns.length; i += TURNS_PER_REQUEST) {
    const items = turns.slice(i, i + TURNS_PER_REQUEST).map((content) => ({ content }));
    inFlight.push(
      post(url, { items }).then((a) => {
        if (a.status !== 200) throw new Error(`retain failed: ${JSON.stringify(a.json)}`);
      }),
    );
    if (inFlight.length >= REQUESTS_IN_FLIGHT) await inFlight.shift();
  }
  await Promise.all(inFlight);
  return turns.length / ((performance.now() - started) / 1000);
}
