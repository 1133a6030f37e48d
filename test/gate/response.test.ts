// When a request on a node:http response is over, over real loopback connections: sent, or its client gone and the
// handler done with it (end(), a pipe cut or begun after the close, or the framework's chain settling).
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import type { Complete } from '../../src/gate/completion.js';
import { whenOver } from '../../src/gate/response.js';
import { settle } from '../../src/testing/adapter-contract-fixtures.js';
import { connectionClosed } from '../../src/testing/adapter-contract-http.js';

/** A `complete` that records what it is told, in order, each part acting on its first call only, as the gate's. */
function recorder() {
  const told: string[] = [];
  let over = false;
  let left = false;
  const complete: Complete<string> = Object.assign(
    (status: number | undefined, answer: string) => {
      if (!over) told.push(`over ${status} ${answer}`);
      over = true;
    },
    {
      left: (answer: string) => {
        if (!over && !left) told.push(`left ${answer}`);
        left = true;
      },
    },
  );
  return { told, complete };
}

/** A pending promise and what settles it, for a framework's chain that a test ends when it says. */
function chain() {
  let settle = () => {};
  const settled = new Promise<void>((resolve) => (settle = resolve));
  return { settled, settle };
}

/** One request from a raw client, handed to the test on the server's side; `t.after` closes both ends. */
async function exchange(t: { after(fn: () => Promise<void>): void }) {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const arrived = once(server, 'request') as Promise<[IncomingMessage, ServerResponse]>;
  const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
  socket.on('error', () => {});
  t.after(async () => {
    socket.destroy();
    server.closeAllConnections();
    server.close();
    await once(server, 'close');
  });
  await once(socket, 'connect');
  socket.write('GET / HTTP/1.1\r\nHost: test\r\n\r\n');
  const [req, res] = await arrived;
  return {
    res,
    /** The client resets the connection; resolves once the server has seen it close. */
    reset: async () => {
      socket.resetAndDestroy();
      await connectionClosed(req);
      await settle();
    },
  };
}

describe('whenOver on a node:http response', () => {
  it('a response sent in full: over with its final status, once, and its client never counted as gone', async (t) => {
    const { res } = await exchange(t);
    const { told, complete } = recorder();
    whenOver(res, complete, 'res');
    const closed = once(res, 'close');
    res.statusCode = 201;
    res.end('ok');
    await closed;
    assert.deepEqual(told, ['over 201 res']);
  });

  it('a client that left: told at once; over only when the handler ends the response on the closed connection', async (t) => {
    const { res, reset } = await exchange(t);
    const { told, complete } = recorder();
    whenOver(res, complete, 'res');
    res.write('first');
    await reset();
    assert.deepEqual(told, ['left res']);
    res.end('late');
    assert.deepEqual(told, ['left res', 'over undefined res']);
  });

  it('a client that left before the limiter answered: told when watched; over at the end()', async (t) => {
    const { res, reset } = await exchange(t);
    await reset();
    const { told, complete } = recorder();
    whenOver(res, complete, 'res');
    assert.deepEqual(told, ['left res']);
    res.end();
    assert.deepEqual(told, ['left res', 'over undefined res']);
  });

  it('a handler that never ends its response holds it: left, never over', async (t) => {
    const { res, reset } = await exchange(t);
    const { told, complete } = recorder();
    whenOver(res, complete, 'res');
    await reset();
    await settle();
    assert.deepEqual(told, ['left res']);
  });

  it('a body piped into the response: over when the close cuts the pipe, or when a pipe begins after it', async (t) => {
    for (const pipedAfter of [false, true]) {
      const { res, reset } = await exchange(t);
      const { told, complete } = recorder();
      whenOver(res, complete, 'res');
      // A source that never ends: only the close stops the pipe.
      const body = new Readable({ read() {} });
      body.push('first');
      if (!pipedAfter) body.pipe(res);
      await reset();
      if (pipedAfter) {
        assert.deepEqual(told, ['left res']);
        body.pipe(res);
      }
      assert.deepEqual(told, ['left res', 'over undefined res'], `piped after the close: ${pipedAfter}`);
      body.destroy();
    }
  });
});

describe("whenOver with the framework's chain as the handler (Koa, Hono)", () => {
  it('a response sent after the chain settled: over with its status', async (t) => {
    const { res } = await exchange(t);
    const { told, complete } = recorder();
    const { settled, settle: end } = chain();
    whenOver(res, complete, 'ctx', settled);
    end();
    await settled;
    assert.deepEqual(told, []);
    const finished = once(res, 'finish');
    res.end('ok');
    await finished;
    assert.deepEqual(told, ['over 200 ctx']);
  });

  it('a client that left while the chain runs: over once it settles, whether it resolves or rejects', async (t) => {
    for (const rejects of [false, true]) {
      const { res, reset } = await exchange(t);
      const { told, complete } = recorder();
      const { settled, settle: end } = chain();
      const chained = rejects
        ? settled.then(() => Promise.reject(new Error('thrown in the chain')))
        : settled;
      chained.catch(() => {});
      whenOver(res, complete, 'ctx', chained);
      await reset();
      assert.deepEqual(told, ['left ctx']);
      end();
      await settle();
      assert.deepEqual(told, ['left ctx', 'over undefined ctx'], `rejects: ${rejects}`);
    }
  });

  it('a client that left mid-stream, after the chain settled: over at the close', async (t) => {
    const { res, reset } = await exchange(t);
    const { told, complete } = recorder();
    const { settled, settle: end } = chain();
    whenOver(res, complete, 'ctx', settled);
    end();
    await settled;
    res.write('first');
    await reset();
    assert.deepEqual(told, ['left ctx', 'over undefined ctx']);
  });
});
