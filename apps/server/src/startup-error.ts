// A start that cannot go on for a reason the operator can fix: main.ts prints its message as one line
// (what is wrong, what to do) and exits non-zero, without a stack trace.
export class StartupError extends Error {
  override readonly name = "StartupError";
}

/** The one line printed for a failed start: a StartupError's message, or the first line of anything else. */
export function startupMessage(err: unknown): string {
  if (err instanceof StartupError) return err.message;
  const message = err instanceof Error ? err.message : String(err);
  return `could not start: ${message.split("\n")[0]}`;
}
