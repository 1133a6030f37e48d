#!/usr/bin/env node
// The `tollgate` command: `tollgate simulate` serves the rate limiter simulator; `--help` and `--version` say what it is.
import { type Command, parseCommandLine } from './cli/arguments.js';
import { CliError, errorText } from './cli/cli-error.js';
import { packageVersion } from './cli/package-version.js';
import { simulateCommand } from './cli/simulate-command.js';
import { MAIN_USAGE, USAGE } from './cli/usage.js';

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
      await simulateCommand(command);
      return undefined;
  }
}

const args = process.argv.slice(2);
const code = await main(args).catch((error: unknown) => {
  const failure =
    error instanceof CliError
      ? error
      : new CliError(error instanceof Error ? error.message : String(error), 1);
  // With --json anywhere on the line, even a usage mistake is reported as JSON.
  process.stderr.write(errorText(failure, args.includes('--json')));
  return failure.exitCode;
});
if (code !== undefined) process.exitCode = code;
