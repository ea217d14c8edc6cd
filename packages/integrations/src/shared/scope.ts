import type { Mnemos, RecallOptions } from '@mnemos/client';

/** Which memory an adapter reads and writes: one bank (and optionally one space) through a Mnemos client. */
export interface MemoryScope {
  /** A configured `@mnemos/client` instance (engine or gateway). */
  client: Mnemos;
  /** The bank every call uses; tools never let the model choose another one. */
  bankId: string;
  /** The space of every call; the client's default space when absent. */
  space?: string | undefined;
}

/** Recall settings an adapter passes on to the engine (`max_tokens`, `budget`, `types`, `tags`, ...). */
export type RecallSettings = Omit<RecallOptions, 'space' | 'signal' | 'timeoutMs'>;

export function checkScope(scope: MemoryScope, adapter: string): void {
  // JavaScript callers reach this without the types' guarantees; the checks answer them with what to pass.
  const given = scope as Partial<MemoryScope> | undefined;
  if (given?.client === undefined || typeof given.client.recall !== 'function') {
    const example = 'new Mnemos({ baseUrl: "http://localhost:8888" })';
    throw new TypeError(`${adapter}: pass a Mnemos client as "client", e.g. ${example}`);
  }
  if (typeof given.bankId !== 'string' || given.bankId === '') {
    throw new TypeError(`${adapter}: "bankId" must name the memory bank, e.g. the user's id`);
  }
}
