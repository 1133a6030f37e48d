#!/usr/bin/env node
// The `tollgate` command: `tollgate simulate` starts the demo server, whose home page is the rate limiter simulator.
import { createDemoApp } from '../demo/demo-app.js';
import { serve } from '../demo/serve.js';
import { MemoryStore } from './stores/memory-store.js';

const USAGE = `Usage: tollgate <command>

Commands:
  simulate    Start the demo server on the in-memory store and print the simulator's URL
              (PORT sets the port, default 3000; Ctrl-C stops it).

Options:
  -h, --help  Show this help.
`;

async function main(args: readonly string[]): Promise<number | undefined> {
  const [command, ...rest] = args;
  if (command === '-h' || command === '--help' || command === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  if (command !== 'simulate' || rest.length > 0) {
    process.stderr.write(
      command === undefined ? USAGE : `tollgate: unknown command "${args.join(' ')}"\n\n${USAGE}`,
    );
    return 2;
  }
  const port = Number(process.env.PORT ?? 3000);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    process.stderr.write(`tollgate: PORT must be a port number (received "${process.env.PORT}")\n`);
    return 2;
  }
  const store = new MemoryStore();
  const server = await serve(createDemoApp({ store }), { port, onClose: () => store.close() });
  const address = server.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : port}/`;
  process.stdout.write(`Tollgate simulator: ${url}\n`);
  // The server keeps the process alive until SIGINT/SIGTERM, which `serve` turns into a drain and exit.
  return undefined;
}

const code = await main(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(`tollgate: ${error instanceof Error ? error.message : String(error)}\n`);
  return 1;
});
if (code !== undefined) process.exitCode = code;
