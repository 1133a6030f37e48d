// The command's help texts: what `tollgate --help` and `tollgate help <command>` print.

export const COMMANDS = ['simulate', 'help'] as const;
export type CommandName = (typeof COMMANDS)[number];

export const MAIN_USAGE = `Usage: tollgate <command> [options]

Commands:
  simulate          Serve the rate limiter simulator on this machine and print its URL
  help [command]    Show this help, or a command's

Options:
  -h, --help        Show this help
  -v, --version     Print tollgate's version

Exit codes: 0 done, 1 failed (a port in use, say), 2 wrong usage.
`;

export const SIMULATE_USAGE = `Usage: tollgate simulate [--port <port>] [--host <host>] [--json]

Serves the rate limiter simulator (its page, POST /api/simulate, and the rate-limited routes its live mode
calls, on an in-memory store) until Ctrl-C or SIGTERM, and prints its URL.

Options:
  --port <port>     Port to listen on, 0 for any free one (default: the PORT variable, else 3000)
  --host <host>     Address to listen on (default: 127.0.0.1, this machine only)
  --json            Print {"url","port"} as one JSON line, and errors as one JSON line on stderr
  -h, --help        Show this help
`;

export const USAGE: Readonly<Record<CommandName, string>> = { simulate: SIMULATE_USAGE, help: MAIN_USAGE };
