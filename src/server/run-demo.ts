// What the demo servers share: their environment settings, a clear refusal of bad ones, serving and draining.
import { createDemoApp, type DemoOptions } from './demo-app.js';
import { serve } from './serve.js';

/** Says why the demo cannot start and exits 1: a stack trace would bury a configuration mistake. */
export function refuseToStart(reason: string): never {
  process.stderr.write(`tollgate demo: ${reason}\n`);
  process.exit(1);
}

export function envPort(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    refuseToStart(`${name} must be a port number from 0 to 65535 (got ${JSON.stringify(raw)})`);
  return port;
}

/** Only '1' and '0': a typo such as FAIL_OPEN=no must not silently pick a fail mode. */
export function envFlag(name: string, fallback: boolean): boolean {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw !== '1' && raw !== '0') refuseToStart(`${name} must be 1 or 0 (got ${JSON.stringify(raw)})`);
  return raw === '1';
}

/** Serves the demo app as SERVER_ID (default 'primary') on PORT (default 3000); the drain closes the store. */
export async function runDemo(options: Omit<DemoOptions, 'serverId'>): Promise<void> {
  const { store } = options;
  await serve(createDemoApp({ ...options, serverId: process.env.SERVER_ID || 'primary' }), {
    port: envPort('PORT', 3000),
    onClose: () => store.close?.(),
  });
}
