// What the command reports when it stops short: a usage mistake (exit 2, with the usage) or a failure (exit 1).

export class CliError extends Error {
  /** For a usage mistake: the usage of the command it was made on. */
  readonly usage: string | undefined;
  /** Whether the command line asked for JSON output (`--json`), so the error is reported as JSON too. */
  readonly json: boolean;

  constructor(
    message: string,
    readonly exitCode: 1 | 2,
    { usage, json = false }: { readonly usage?: string; readonly json?: boolean } = {},
  ) {
    super(message);
    this.usage = usage;
    this.json = json;
  }
}

export function usageError(message: string, usage: string, json = false): CliError {
  return new CliError(message, 2, { usage, json });
}

/** One line on stderr, JSON with `--json` so that a program reading the output never meets prose. */
export function errorText(error: CliError): string {
  if (error.json) return `${JSON.stringify({ error: error.message, code: error.exitCode })}\n`;
  return `tollgate: ${error.message}\n${error.usage === undefined ? '' : `\n${error.usage}`}`;
}
