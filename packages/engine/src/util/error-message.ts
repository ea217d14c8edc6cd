/**
 * The message of anything thrown: an Error's message, any other value (a thrown string, a rejection with a plain
 * object) as its string, so a message built from it never reads "undefined".
 */
export function errorMessage(thrown: unknown): string {
  return thrown instanceof Error ? thrown.message : String(thrown);
}
