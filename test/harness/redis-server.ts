// Throwaway redis-server processes for tests: private ports and temp dirs, no persistence, never left running.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { accessSync, closeSync, constants, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createConnection, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export interface RedisServer {
  readonly host: string;
  readonly port: number;
  readonly url: string;
  /** undefined when pointing at an external TEST_REDIS_URL server; after kill() it is the pid of the dead process. */
  readonly pid: number | undefined;
  readonly external: boolean;
  /** Default SIGKILL; resolves once the process has exited. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** SIGSTOP: the server keeps its sockets open but never answers, i.e. a hung server. */
  pause(): void;
  /** SIGCONT. */
  resume(): void;
  /** Fresh process on the same port: empty data, empty script cache. Kills the current process first if alive. */
  restart(): Promise<void>;
  /** SIGTERM, then SIGKILL after 2 s; removes the temp dir. Idempotent. */
  stop(): Promise<void>;
  /** One command through `redis-cli`; resolves with trimmed stdout, rejects on an error reply. */
  command(...args: string[]): Promise<string>;
}

export interface StartRedisServerOptions {
  /** Extra redis-server CLI args, e.g. ['--maxmemory', '10mb']. Not allowed with TEST_REDIS_URL. */
  args?: readonly string[];
}

const HOST = '127.0.0.1';
const READY_TIMEOUT_MS = 5_000;
const STOP_GRACE_MS = 2_000;
const KILL_WAIT_MS = 5_000;
const CLI_TIMEOUT_MS = 10_000;
const SPAWN_ATTEMPTS = 5;

// ---------------------------------------------------------------------------------------------------------
// Binaries

function findOnPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this PATH entry
    }
  }
  return undefined;
}

/** Looked up on every call (not cached) so tests of the skip policy can change PATH. */
export function redisServerBinary(): string | undefined {
  return findOnPath('redis-server');
}

/** Prefers the redis-cli next to redis-server so both come from the same install. */
export function redisCliBinary(): string | undefined {
  const server = redisServerBinary();
  if (server !== undefined) {
    const sibling = join(dirname(server), 'redis-cli');
    try {
      accessSync(sibling, constants.X_OK);
      return sibling;
    } catch {
      // fall back to PATH
    }
  }
  return findOnPath('redis-cli');
}

// ---------------------------------------------------------------------------------------------------------
// Process tracking: whatever happens to the test process, its redis-server children must die with it.

const liveChildren = new Set<ChildProcess>();
const liveDirs = new Set<string>();
let exitHooksInstalled = false;

function isAlive(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

// Must stay synchronous: it also runs from the 'exit' event, where async work never happens.
function killEverythingSync(): void {
  for (const child of liveChildren) {
    if (child.pid !== undefined && isAlive(child)) {
      try {
        process.kill(child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
  liveChildren.clear();
  for (const dir of liveDirs) rmSync(dir, { recursive: true, force: true });
  liveDirs.clear();
}

function installExitHooks(): void {
  if (exitHooksInstalled) return;
  exitHooksInstalled = true;
  process.on('exit', killEverythingSync);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const onSignal = (): void => {
      killEverythingSync();
      // Listening to a signal disables Node's default "die by that signal"; restore it unless
      // someone else has taken responsibility for the signal.
      if (process.listenerCount(signal) === 1) {
        process.removeListener(signal, onSignal);
        process.kill(process.pid, signal);
      }
    };
    process.on(signal, onSignal);
  }
}

const TEMP_PREFIX = 'tollgate-redis-';
let staleDirsSwept = false;

// A SIGKILLed test process cannot clean up after itself (setpriv still kills its servers), so the next
// run removes temp dirs whose owning pid, encoded in the name, is gone.
function sweepStaleTempDirs(): void {
  if (staleDirsSwept) return;
  staleDirsSwept = true;
  let names: string[];
  try {
    names = readdirSync(tmpdir());
  } catch {
    return;
  }
  for (const name of names) {
    const owner = /^tollgate-redis-(?:[a-z]+-)?(\d+)-/.exec(name)?.[1];
    if (owner === undefined || Number(owner) === process.pid) continue;
    try {
      process.kill(Number(owner), 0);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ESRCH')
        rmSync(join(tmpdir(), name), { recursive: true, force: true });
    }
  }
}

/** A temp dir that is removed even if the test process exits without stop(). */
export async function makeTempDir(kind?: string): Promise<string> {
  installExitHooks();
  sweepStaleTempDirs();
  const dir = await mkdtemp(
    join(tmpdir(), `${TEMP_PREFIX}${kind === undefined ? '' : `${kind}-`}${process.pid}-`),
  );
  liveDirs.add(dir);
  return dir;
}

export async function removeTempDir(dir: string): Promise<void> {
  liveDirs.delete(dir);
  await rm(dir, { recursive: true, force: true });
}

/** Resolves true once the child has exited, false after timeoutMs. */
export async function waitForExit(child: ChildProcess, timeoutMs = KILL_WAIT_MS): Promise<boolean> {
  if (!isAlive(child)) return true;
  // Children are unref'd so a forgotten stop() cannot hang a test file; the (ref'd) timer is what keeps
  // the event loop alive while we wait, otherwise node:test reports a promise that never settled.
  return await new Promise<boolean>((resolve) => {
    const onExit = (): void => {
      clearTimeout(timer);
      resolve(true);
    };
    const timer = setTimeout(() => {
      child.removeListener('exit', onExit);
      resolve(false);
    }, timeoutMs);
    child.once('exit', onExit);
  });
}

/** SIGTERM, SIGKILL after the grace period; a stopped (SIGSTOP) process is continued so it can see SIGTERM. */
export async function stopProcess(child: ChildProcess, graceMs = STOP_GRACE_MS): Promise<void> {
  if (child.pid === undefined || !isAlive(child)) return;
  signalChild(child, 'SIGTERM');
  signalChild(child, 'SIGCONT');
  if (await waitForExit(child, graceMs)) return;
  signalChild(child, 'SIGKILL');
  if (!(await waitForExit(child))) throw new Error(`redis-server pid ${child.pid} survived SIGKILL`);
}

export function signalChild(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || !isAlive(child)) return;
  try {
    process.kill(child.pid, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

// ---------------------------------------------------------------------------------------------------------
// Ports

/** Ports that were free a moment ago; all sockets are held open together so the ports are distinct. */
export async function freePorts(count: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    const ports: number[] = [];
    for (let i = 0; i < count; i++) {
      const server = createServer();
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, HOST, () => resolve());
      });
      const address = server.address();
      if (address === null || typeof address === 'string') throw new Error('unexpected server address');
      ports.push(address.port);
    }
    return ports;
  } finally {
    await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
  }
}

// ---------------------------------------------------------------------------------------------------------
// A minimal RESP client: readiness polling must not depend on the client libraries under test, and
// spawning redis-cli every few milliseconds would be slow.

export type RespValue = string | number | null | Error | RespValue[];

export class RedisReplyError extends Error {
  override name = 'RedisReplyError';
}

function encodeCommand(args: readonly string[]): Buffer {
  const parts = [`*${args.length}\r\n`];
  for (const arg of args) parts.push(`$${Buffer.byteLength(arg)}\r\n${arg}\r\n`);
  return Buffer.from(parts.join(''));
}

function parseReply(buf: Buffer, start: number): { value: RespValue; end: number } | undefined {
  const lineEnd = buf.indexOf('\r\n', start);
  if (lineEnd === -1) return undefined;
  const type = String.fromCharCode(buf[start] ?? 0);
  const line = buf.toString('utf8', start + 1, lineEnd);
  const next = lineEnd + 2;
  switch (type) {
    case '+':
      return { value: line, end: next };
    case '-':
      return { value: new RedisReplyError(line), end: next };
    case ':':
      return { value: Number(line), end: next };
    case '$': {
      const length = Number(line);
      if (length < 0) return { value: null, end: next };
      if (buf.length < next + length + 2) return undefined;
      return { value: buf.toString('utf8', next, next + length), end: next + length + 2 };
    }
    case '*': {
      const count = Number(line);
      if (count < 0) return { value: null, end: next };
      const items: RespValue[] = [];
      let offset = next;
      for (let i = 0; i < count; i++) {
        const item = parseReply(buf, offset);
        if (item === undefined) return undefined;
        items.push(item.value);
        offset = item.end;
      }
      return { value: items, end: offset };
    }
    default:
      throw new Error(`unexpected RESP type byte ${JSON.stringify(type)}`);
  }
}

/** One command on a fresh connection; rejects on an error reply, connection failure or timeout. */
export function redisCall(
  host: string,
  port: number,
  args: readonly string[],
  timeoutMs = 2_000,
): Promise<RespValue> {
  return new Promise((resolve, reject) => {
    let buffered = Buffer.alloc(0);
    const socket = createConnection({ host, port });
    const finish = (error: Error | undefined, value?: RespValue): void => {
      clearTimeout(timer);
      socket.destroy();
      if (error !== undefined) reject(error);
      else resolve(value ?? null);
    };
    const timer = setTimeout(
      () => finish(new Error(`${host}:${port} did not answer ${args[0] ?? ''} within ${timeoutMs} ms`)),
      timeoutMs,
    );
    socket.once('connect', () => socket.write(encodeCommand(args)));
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      let reply: ReturnType<typeof parseReply>;
      try {
        reply = parseReply(buffered, 0);
      } catch (error) {
        finish(error as Error);
        return;
      }
      if (reply === undefined) return;
      if (reply.value instanceof Error) finish(reply.value);
      else finish(undefined, reply.value);
    });
    socket.once('error', (error) => finish(error));
    socket.once('close', () => finish(new Error(`${host}:${port} closed the connection`)));
  });
}

/** True when the server answers PING with PONG (not -LOADING or similar). */
export async function pingOnce(host: string, port: number, timeoutMs = 500): Promise<boolean> {
  try {
    return (await redisCall(host, port, ['PING'], timeoutMs)) === 'PONG';
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------------------------
// redis-cli

/** `redis-cli -e` so that error replies reject instead of printing to stdout with exit code 0. */
export function redisCli(target: readonly string[], args: readonly string[]): Promise<string> {
  const cli = redisCliBinary();
  if (cli === undefined) return Promise.reject(new Error('redis-cli binary not found on PATH'));
  return new Promise((resolve, reject) => {
    execFile(
      cli,
      ['-e', ...target, ...args],
      { timeout: CLI_TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error !== null) {
          const output = `${stdout}${stderr}`.trim();
          reject(new Error(`redis-cli ${[...target, ...args].join(' ')} failed: ${output || error.message}`));
          return;
        }
        resolve(stdout.trim());
      },
    );
  });
}

// ---------------------------------------------------------------------------------------------------------
// Spawning

export class PortInUseError extends Error {
  override name = 'PortInUseError';
}

function logTail(logFile: string, lines = 20): string {
  try {
    return readFileSync(logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

// setpriv's parent-death signal also covers the one case no handler can: the test process being SIGKILLed.
let setprivPath: string | null | undefined;
function setpriv(): string | undefined {
  if (setprivPath === undefined)
    setprivPath = process.platform === 'linux' ? (findOnPath('setpriv') ?? null) : null;
  return setprivPath ?? undefined;
}

export interface SpawnRedisOptions {
  port: number;
  dir: string;
  args?: readonly string[];
  readyTimeoutMs?: number;
}

/**
 * Starts one redis-server and waits until it answers PING. Throws PortInUseError when the port was taken
 * between choosing and binding it, so callers can retry with another one.
 */
export async function spawnRedisProcess(options: SpawnRedisOptions): Promise<ChildProcess> {
  const binary = redisServerBinary();
  if (binary === undefined) throw new Error('redis-server binary not found on PATH');
  installExitHooks();
  const { port, dir } = options;
  const logFile = join(dir, `redis-${port}.log`);
  const serverArgs = [
    '--port',
    String(port),
    '--bind',
    HOST,
    '--save',
    '',
    '--appendonly',
    'no',
    '--dir',
    dir,
    '--daemonize',
    'no',
    ...(options.args ?? []),
  ];
  const wrapper = setpriv();
  const [command, argv] =
    wrapper === undefined
      ? [binary, serverArgs]
      : [wrapper, ['--pdeathsig', 'KILL', '--', binary, ...serverArgs]];
  const logFd = openSync(logFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn(command, argv, { stdio: ['ignore', logFd, logFd] });
  } finally {
    closeSync(logFd);
  }
  const spawnError = new Promise<Error>((resolve) => child.once('error', resolve));
  child.unref();
  liveChildren.add(child);
  child.once('exit', () => liveChildren.delete(child));

  const deadline = Date.now() + (options.readyTimeoutMs ?? READY_TIMEOUT_MS);
  let failure: Error | undefined;
  void spawnError.then((error) => {
    failure = error;
  });
  while (Date.now() < deadline) {
    if (failure !== undefined) throw new Error(`could not spawn redis-server: ${failure.message}`);
    if (!isAlive(child)) {
      const tail = logTail(logFile);
      if (tail.includes('Address already in use'))
        throw new PortInUseError(`port ${port} is in use:\n${tail}`);
      throw new Error(
        `redis-server on port ${port} exited during startup (code ${child.exitCode}, signal ${child.signalCode}). Log tail:\n${tail}`,
      );
    }
    if (await pingOnce(HOST, port, 250)) return child;
    await sleep(10);
  }
  signalChild(child, 'SIGKILL');
  await waitForExit(child);
  throw new Error(
    `redis-server on port ${port} did not answer PING within ${options.readyTimeoutMs ?? READY_TIMEOUT_MS} ms. Log tail:\n${logTail(logFile)}`,
  );
}

/** Spawns on fresh free ports until one binds; extraPorts are handed to makeArgs (e.g. a cluster bus port). */
export async function spawnOnFreePort(
  dir: string,
  makeArgs: (port: number, extraPorts: number[]) => readonly string[],
  extraPorts = 0,
  firstPorts?: number[],
): Promise<{ child: ChildProcess; port: number }> {
  let ports = firstPorts;
  for (let attempt = 1; ; attempt++) {
    ports ??= await freePorts(1 + extraPorts);
    const [port, ...extra] = ports;
    if (port === undefined) throw new Error('no free port');
    try {
      return { child: await spawnRedisProcess({ port, dir, args: makeArgs(port, extra) }), port };
    } catch (error) {
      if (!(error instanceof PortInUseError) || attempt >= SPAWN_ATTEMPTS) throw error;
      ports = undefined;
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// RedisServer implementations

class OwnedRedisServer implements RedisServer {
  readonly host = HOST;
  readonly external = false;
  #child: ChildProcess;
  #paused = false;
  #stopping: Promise<void> | undefined;

  constructor(
    readonly port: number,
    private readonly dir: string,
    private readonly args: readonly string[],
    child: ChildProcess,
  ) {
    this.#child = child;
  }

  get url(): string {
    return `redis://${this.host}:${this.port}`;
  }

  get pid(): number | undefined {
    return this.#child.pid;
  }

  #assertNotStopped(action: string): void {
    if (this.#stopping !== undefined)
      throw new Error(`cannot ${action}: redis-server on port ${this.port} was stopped`);
  }

  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    this.#assertNotStopped('kill()');
    if (signal === 'SIGSTOP' || signal === 'SIGCONT')
      throw new Error(`use pause()/resume() instead of kill('${signal}')`);
    if (!isAlive(this.#child)) return;
    signalChild(this.#child, signal);
    // A paused process would sit on any catchable signal until continued.
    if (this.#paused && signal !== 'SIGKILL') signalChild(this.#child, 'SIGCONT');
    this.#paused = false;
    if (!(await waitForExit(this.#child))) {
      throw new Error(`redis-server pid ${this.pid} on port ${this.port} did not exit after ${signal}`);
    }
  }

  pause(): void {
    this.#assertNotStopped('pause()');
    if (!isAlive(this.#child))
      throw new Error(`cannot pause(): redis-server on port ${this.port} is not running`);
    signalChild(this.#child, 'SIGSTOP');
    this.#paused = true;
  }

  resume(): void {
    this.#assertNotStopped('resume()');
    signalChild(this.#child, 'SIGCONT');
    this.#paused = false;
  }

  async restart(): Promise<void> {
    this.#assertNotStopped('restart()');
    await this.kill('SIGKILL');
    // The port was just ours, but another process may grab it in between; retry briefly before giving up.
    const deadline = Date.now() + 3_000;
    for (;;) {
      try {
        this.#child = await spawnRedisProcess({ port: this.port, dir: this.dir, args: this.args });
        this.#paused = false;
        return;
      } catch (error) {
        if (!(error instanceof PortInUseError) || Date.now() > deadline) throw error;
        await sleep(50);
      }
    }
  }

  stop(): Promise<void> {
    this.#stopping ??= (async () => {
      try {
        await stopProcess(this.#child);
      } finally {
        await removeTempDir(this.dir);
      }
    })();
    return this.#stopping;
  }

  command(...args: string[]): Promise<string> {
    return redisCli(['-h', this.host, '-p', String(this.port)], args);
  }
}

class ExternalRedisServer implements RedisServer {
  readonly external = true;
  readonly pid = undefined;
  readonly host: string;
  readonly port: number;

  constructor(readonly url: string) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new Error(`TEST_REDIS_URL is not a valid URL: ${url}`);
    }
    this.host = parsed.hostname.replace(/^\[|\]$/g, '') || HOST;
    this.port = parsed.port === '' ? 6379 : Number(parsed.port);
  }

  #refuse(action: string): Error {
    return new Error(
      `${action} needs a redis-server owned by the test, but TEST_REDIS_URL points at an external server (${this.host}:${this.port}); unset TEST_REDIS_URL to run fault-injection tests`,
    );
  }

  kill(): Promise<void> {
    return Promise.reject(this.#refuse('kill()'));
  }

  pause(): void {
    throw this.#refuse('pause()');
  }

  resume(): void {
    throw this.#refuse('resume()');
  }

  restart(): Promise<void> {
    return Promise.reject(this.#refuse('restart()'));
  }

  async stop(): Promise<void> {
    // Not ours to stop.
  }

  command(...args: string[]): Promise<string> {
    return redisCli(['-u', this.url], args);
  }
}

export async function startRedisServer(options: StartRedisServerOptions = {}): Promise<RedisServer> {
  const args = options.args ?? [];
  const externalUrl = process.env.TEST_REDIS_URL;
  if (externalUrl !== undefined && externalUrl !== '') {
    if (args.length > 0) {
      throw new Error(
        `startRedisServer({ args: ${JSON.stringify(args)} }) needs its own redis-server, but TEST_REDIS_URL is set`,
      );
    }
    return new ExternalRedisServer(externalUrl);
  }
  const dir = await makeTempDir();
  try {
    const { child, port } = await spawnOnFreePort(dir, () => args);
    return new OwnedRedisServer(port, dir, args, child);
  } catch (error) {
    await removeTempDir(dir);
    throw error;
  }
}
