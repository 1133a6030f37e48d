#!/usr/bin/env node
// The `tollgate` command: `simulate` serves the rate limiter simulator, `serve` the rate limit service; `--help` and `--version` say what it is.
import { type Command, parseCommandLine } from './cli/arguments.js';
import { CliError, errorText } from './cli/cli-error.js';
import { packageVersion } from './cli/package-version.js';
import { serveCommand } from './cli/serve-command.js';
import { simulateCommand } from './cli/simulate-command.js';
import { MAIN_USAGE, USAGE } from './cli/usage.js';

// A reader that went away (`tollgate --help | head -1`) is no failure of the command: what is left goes nowhere.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
  });
}

/** Whether the parsed command line asked for JSON output; until it is parsed, errors are reported as text. */
let json = false;

/** The exit code, or undefined when a server now keeps the process alive until a signal. */
async function main(args: readonly string[]): Promise<number | undefined> {
  const command: Command = parseCommandLine(args, process.env);
  switch (command.name) {
    case 'help':
      process.stdout.write(command.topic === undefined ? MAIN_USAGE : USAGE[command.topic]);
      return 0;
    case 'version':
      process.stdout.write(`${packageVersion()}\n`);
      return 0;
    case 'simulate':
      json = command.json;
      await simulateCommand(command);
      return undefined;
    case 'serve':
      json = command.json;
      await serveCommand(command, process.env);
      return undefined;
  }
}

const code = await main(process.argv.slice(2)).catch((error: unknown) => {
  const failure =
    error instanceof CliError
      ? error
      : new CliError(error instanceof Error ? error.message : String(error), 1, { json });
  process.stderr.write(errorText(failure));
  return failure.exitCode;
});
if (code !== undefined) process.exitCode = code;
