// What the command's server logs, on stderr one line per entry: `tollgate: ...`, or with --json one JSON object.
import { inspect } from 'node:util';
import type { Logger } from '../core/logger.js';

/** A Logger that also takes the ordinary events of a long-running command (listening, reloaded, draining). */
export interface CliLogger extends Logger {
  info(...args: unknown[]): void;
}

/**
 * A Logger for the simulator, the service and their limiters and stores. They log pino's way, `(error, message)`: the line is the message
 * then the error's, never a stack, so that a reader (or a program, with `--json`) sees one entry per line.
 */
export function cliLogger(json: boolean): CliLogger {
  const write = (level: 'info' | 'warn' | 'error', args: readonly unknown[]) => {
    const message = oneLine(args);
    process.stderr.write(
      json
        ? `${JSON.stringify({ level, message })}\n`
        : `tollgate: ${level === 'warn' ? 'warning: ' : ''}${message}\n`,
    );
  };
  return {
    info: (...args) => write('info', args),
    warn: (...args) => write('warn', args),
    error: (...args) => write('error', args),
  };
}

function oneLine(args: readonly unknown[]): string {
  const texts = args.filter((arg) => typeof arg === 'string');
  const rest = args.filter((arg) => typeof arg !== 'string');
  return [...texts, ...rest.map((arg) => (arg instanceof Error ? arg.message : inspect(arg)))]
    .join(': ')
    .replace(/^\[tollgate\] /, '')
    .replace(/\s*\n\s*/g, ' ');
}
