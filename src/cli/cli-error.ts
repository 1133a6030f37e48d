// What the command reports when it stops short: a usage mistake (exit 2, with the usage) or a failure (exit 1).

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: 1 | 2,
    /** For a usage mistake: the usage of the command it was made on. */
    readonly usage?: string,
  ) {
    super(message);
  }
}

export function usageError(message: string, usage: string): CliError {
  return new CliError(message, 2, usage);
}

/** One line on stderr, JSON with `--json` so that a program reading the output never meets prose. */
export function errorText(error: CliError, json: boolean): string {
  if (json) return `${JSON.stringify({ error: error.message, code: error.exitCode })}\n`;
  return `tollgate: ${error.message}\n${error.usage === undefined ? '' : `\n${error.usage}`}`;
}
