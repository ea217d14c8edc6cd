/**
 * The embedding model cannot be obtained: the hub is unreachable, refuses the request, or serves a file that does
 * not verify. The message is one line naming the model, the address tried, what went wrong and how to fix it. Exit
 * code 78 (EX_CONFIG): the machine's setup has to change, so restarting in a loop does not help.
 */
export class ModelUnavailableError extends Error {
  override readonly name = 'ModelUnavailableError';
  readonly exitCode = 78;
}

/** The two ways out when the hub cannot serve the model, as the tail of every download failure. */
export function downloadFixes(model: string): string {
  const folder = model.split('/').pop() ?? model;
  return (
    `fix: let this machine reach the hub or set MNEMOS_API_EMBEDDINGS_HUB_URL to a mirror, ` +
    `or copy the model to a folder and set MNEMOS_API_EMBEDDINGS_LOCAL_MODEL=/path/to/${folder}`
  );
}

/** A fetch failure's reason with its cause (Node's fetch says only "fetch failed" and keeps the reason in `cause`). */
export function describeFailure(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause;
  if (cause instanceof Error) {
    const code = (cause as NodeJS.ErrnoException).code;
    return `${error.message}: ${code !== undefined && !cause.message.includes(code) ? `${code} ` : ''}${cause.message}`;
  }
  return error.message;
}
