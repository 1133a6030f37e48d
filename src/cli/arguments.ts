// The command line to the command to run, with node:util's parseArgs; every mistake is a usage error naming its argument.
import { parseArgs } from 'node:util';
import { DEFAULT_GRPC_PORT, DEFAULT_HTTP_PORT } from '../service/runtime/service-options.js';
import { usageError } from './cli-error.js';
import type { ServeOptions } from './serve-command.js';
import { COMMANDS, type CommandName, MAIN_USAGE, SERVE_USAGE, SIMULATE_USAGE } from './usage.js';

export type Command =
  | { readonly name: 'help'; readonly topic: CommandName | undefined }
  | { readonly name: 'version' }
  | { readonly name: 'simulate'; readonly port: number; readonly host: string; readonly json: boolean }
  | ({ readonly name: 'serve' } & ServeOptions);

type Env = Readonly<Record<string, string | undefined>>;
type Options = Record<
  string,
  { readonly type: 'string' | 'boolean'; readonly short?: string; readonly multiple?: boolean }
>;
type Values<T extends Options> = {
  [K in keyof T]?: T[K]['type'] extends 'string'
    ? T[K]['multiple'] extends true
      ? string[]
      : string
    : boolean;
};

const DEFAULT_PORT = 3000;
const DEFAULT_HOST = '127.0.0.1';

const MAIN_OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
} as const satisfies Options;

const SIMULATE_OPTIONS = {
  port: { type: 'string' },
  host: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies Options;

const SERVE_OPTIONS = {
  config: { type: 'string', multiple: true },
  'grpc-port': { type: 'string' },
  'http-port': { type: 'string' },
  host: { type: 'string' },
  'merge-domains': { type: 'boolean' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies Options;

/** `env` is read for simulate's PORT only: serve's store variables are read when it starts. */
export function parseCommandLine(args: readonly string[], env: Env): Command {
  // The options before the command are tollgate's own; from the command on, they are the command's.
  const at = args.findIndex((arg) => !arg.startsWith('-'));
  const { values: main } = parse(at === -1 ? args : args.slice(0, at), MAIN_OPTIONS, MAIN_USAGE, 0);
  const [command, ...rest] = at === -1 ? [] : args.slice(at);
  const topic = command === undefined ? undefined : commandNamed(command);
  if (main.help === true) return { name: 'help', topic };
  if (main.version === true) {
    if (command !== undefined)
      throw usageError(`--version takes no command (received "${command}")`, MAIN_USAGE);
    return { name: 'version' };
  }
  switch (topic) {
    case undefined:
      throw usageError('a command is required', MAIN_USAGE);
    case 'help': {
      // `help --help` is no mistake: it is the same help.
      const { positionals } = parse(rest, { help: MAIN_OPTIONS.help }, MAIN_USAGE, 1);
      return { name: 'help', topic: positionals[0] === undefined ? undefined : commandNamed(positionals[0]) };
    }
    case 'simulate':
      return simulate(rest, env);
    case 'serve':
      return serve(rest);
  }
}

function serve(args: readonly string[]): Command {
  const { values, json } = parse(args, SERVE_OPTIONS, SERVE_USAGE, 0);
  if (values.help === true) return { name: 'help', topic: 'serve' };
  const config = values.config ?? [];
  if (config.length === 0) throw usageError('--config is required', SERVE_USAGE, json);
  if (config.includes('')) throw usageError('--config must not be empty', SERVE_USAGE, json);
  const host = values.host ?? DEFAULT_HOST;
  if (host === '') throw usageError('--host must not be empty', SERVE_USAGE, json);
  const port = (option: '--grpc-port' | '--http-port', text: string | undefined, fallback: number) =>
    text === undefined ? fallback : portNumber(option, text, json, SERVE_USAGE);
  const grpcPort = port('--grpc-port', values['grpc-port'], DEFAULT_GRPC_PORT);
  const httpPort = port('--http-port', values['http-port'], DEFAULT_HTTP_PORT);
  // Else the second server to listen would report the port in use, by the first.
  if (grpcPort === httpPort && grpcPort !== 0)
    throw usageError(`--grpc-port and --http-port must differ (both ${grpcPort})`, SERVE_USAGE, json);
  return {
    name: 'serve',
    config,
    grpcPort,
    httpPort,
    host,
    mergeDomains: values['merge-domains'] === true,
    json,
  };
}

function simulate(args: readonly string[], env: Env): Command {
  const { values, json } = parse(args, SIMULATE_OPTIONS, SIMULATE_USAGE, 0);
  if (values.help === true) return { name: 'help', topic: 'simulate' };
  const host = values.host ?? DEFAULT_HOST;
  if (host === '') throw usageError('--host must not be empty', SIMULATE_USAGE, json);
  let port = DEFAULT_PORT;
  if (values.port !== undefined) port = portNumber('--port', values.port, json, SIMULATE_USAGE);
  else if (env.PORT !== undefined && env.PORT !== '')
    port = portNumber('the PORT variable', env.PORT, json, SIMULATE_USAGE);
  return { name: 'simulate', port, host, json };
}

function portNumber(source: string, text: string, json: boolean, usage: string): number {
  const value = /^\d{1,5}$/.test(text) ? Number(text) : Number.NaN;
  if (!(value <= 65_535)) {
    const message = `${source} must be a port number from 0 to 65535 (received "${text}")`;
    throw usageError(message, usage, json);
  }
  return value;
}

function commandNamed(name: string): CommandName {
  if (!(COMMANDS as readonly string[]).includes(name))
    throw usageError(`unknown command "${name}"`, MAIN_USAGE);
  return name as CommandName;
}

/**
 * `args` parsed leniently and then checked here, so that each mistake gets a one-line message naming the
 * argument (parseArgs' strict messages run over several lines): an unknown option, a missing or unwanted value,
 * or more than `maxPositionals` positionals. `json` is whether a `--json` flag was parsed, so that even a mistake
 * on the same line is reported as JSON.
 */
function parse<T extends Options>(
  args: readonly string[],
  known: T,
  usage: string,
  maxPositionals: number,
): { values: Values<T>; positionals: string[]; json: boolean } {
  const { values, positionals, tokens } = parseArgs({
    args: [...args],
    options: known,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const json =
    known.json?.type === 'boolean' &&
    tokens.some((token) => token.kind === 'option' && token.name === 'json' && token.value === undefined);
  for (const token of tokens) {
    if (token.kind !== 'option') continue;
    const option = known[token.name];
    if (option === undefined) throw usageError(`unknown option ${token.rawName}`, usage, json);
    // Leniently, `--host --json` takes `--json` as the host: an option is no value, though `--host=-x` may be one.
    const missing = token.value === undefined || (!token.inlineValue && token.value.startsWith('-'));
    if (option.type === 'string' && missing) throw usageError(`${token.rawName} needs a value`, usage, json);
    if (option.type === 'boolean' && token.value !== undefined) {
      throw usageError(`${token.rawName} takes no value`, usage, json);
    }
  }
  const extra = positionals[maxPositionals];
  if (extra !== undefined) throw usageError(`unexpected argument "${extra}"`, usage, json);
  return { values: values as Values<T>, positionals, json };
}
