/**
 * The engine's clock: what "now" is for expiry (which memories reads leave out, which the expiry job deletes, and
 * where a bank's retention counts from). Injected, so tests move time instead of waiting for it.
 */
export type Clock = () => Date;

export const systemClock: Clock = () => new Date();
