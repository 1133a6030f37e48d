// A body that never ends: the client that leaves mid-body is its own fault, not the server's, and one that stalls
// is cut by the request timeout rather than holding the server (and a drain) open.
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { describe, it } from 'node:test';
import type { ServiceObserver } from '../../../src/service/engine/observer.js';
import { serve } from './fake-service.js';

/** The requests the observer was told of, as `protocol result`. */
function watcher() {
  const seen: string[] = [];
  const observer: ServiceObserver = {
    descriptor: () => {},
    storeError: () => {},
    request: (protocol, _ms, result) => seen.push(`${protocol} ${result}`),
  };
  return { seen, observer };
}

/** A POST that announces 100 bytes of body and sends 10. */
function partialPost(port: number, path: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(`POST ${path} HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\n{"domain":`);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

async function waitFor(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe('a body that never ends', () => {
  it('counts a client gone mid-body as invalid, and logs no failure', async () => {
    const { seen, observer } = watcher();
    const { server, logged } = await serve({ observer });
    for (const path of ['/json', '/check']) {
      const socket = await partialPost(server.port, path);
      await new Promise((resolve) => setTimeout(resolve, 20));
      socket.destroy();
    }
    await waitFor(() => seen.length === 2);
    assert.deepEqual(seen, ['json invalid', 'http invalid']);
    assert.deepEqual(logged.errors, []);
  });

  it('cuts a stalled body at the request timeout with 408, counted as invalid', async () => {
    const { seen, observer } = watcher();
    const { server, logged } = await serve({ observer, requestTimeoutMs: 50 });
    const socket = await partialPost(server.port, '/json');
    let received = '';
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString();
    });
    await new Promise((resolve) => socket.once('close', resolve));
    assert.match(received, /^HTTP\/1\.1 408 /);
    await waitFor(() => seen.length === 1);
    assert.deepEqual(seen, ['json invalid']);
    assert.deepEqual(logged.errors, []);
  });

  it('refuses a request timeout that is not a positive integer, by name', async () => {
    await assert.rejects(serve({ requestTimeoutMs: 0 }), {
      code: 'ERR_TOLLGATE_CONFIG',
      option: 'requestTimeoutMs',
    });
  });
});
