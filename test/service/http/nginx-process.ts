// A throwaway nginx for tests: its own prefix, configuration, pid file, error log and free port, one process
// in the foreground, stopped by its pid.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePorts } from '../../harness/redis-server.js';

/** Debian's nginx, unless NGINX_BIN names another. */
export const NGINX_BIN = process.env.NGINX_BIN ?? '/usr/sbin/nginx';

export function nginxInstalled(): boolean {
  return existsSync(NGINX_BIN);
}

export interface NginxProcess {
  readonly port: number;
  stop(): Promise<void>;
}

/**
 * Starts nginx with `serverBlock` (the body of one `server {}`, listening on the port given to it) and waits until
 * its `/_ready` location answers: the block must have `location = /_ready { return 204; }`.
 */
export async function startNginx(serverBlock: (port: number) => string): Promise<NginxProcess> {
  const prefix = await mkdtemp(join(tmpdir(), 'tollgate-nginx-'));
  const [port] = (await freePorts(1)) as [number];
  const errorLog = join(prefix, 'error.log');
  await writeFile(join(prefix, 'nginx.conf'), configuration(prefix, errorLog, serverBlock(port)));
  // -e: the error log from the very start, before the configuration is read (else the built-in path is opened).
  const child = spawn(NGINX_BIN, ['-p', prefix, '-c', join(prefix, 'nginx.conf'), '-e', errorLog], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined)
      process.kill(child.pid, 'SIGTERM');
    await exited;
    await rm(prefix, { recursive: true, force: true });
  };
  try {
    await ready(port, child, async () => `${stderr}${await readFile(errorLog, 'utf8').catch(() => '')}`);
  } catch (error) {
    await stop();
    throw error;
  }
  return { port, stop };
}

function configuration(prefix: string, errorLog: string, server: string): string {
  return `
daemon off;
master_process off;
worker_processes 1;
pid ${join(prefix, 'nginx.pid')};
error_log ${errorLog} warn;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path ${join(prefix, 'client_body')};
  proxy_temp_path ${join(prefix, 'proxy')};
  fastcgi_temp_path ${join(prefix, 'fastcgi')};
  uwsgi_temp_path ${join(prefix, 'uwsgi')};
  scgi_temp_path ${join(prefix, 'scgi')};
  server {
${server}
  }
}
`;
}

/** Polls `/_ready` until it answers; fails at once, with nginx's own words, if it exits. */
async function ready(port: number, child: ChildProcess, log: () => Promise<string>): Promise<void> {
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`nginx exited (${child.exitCode ?? child.signalCode}):\n${await log()}`);
    const answered = await fetch(`http://127.0.0.1:${port}/_ready`).then(
      (response) => response.status === 204,
      () => false,
    );
    if (answered) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
