// The admin's blocks and unblock endpoints at their bounds: the listing's cap, the reads it costs, stores that cannot list.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { describe, it } from 'node:test';
import { createAdmin, MAX_LISTED_IDENTIFIERS } from '../../src/admin/index.js';
import { identifierHasher } from '../../src/identity/identifier-hash.js';
import { createLimiter, type Limiter } from '../../src/limiter/limiter.js';
import { fixedWindow } from '../../src/policies/fixed-window.js';
import { MemoryStore } from '../../src/stores/memory/memory-store.js';
import type { Store } from '../../src/stores/store.js';
import { listen, silentLogger } from '../../src/testing/adapter-contract.js';
import { T0, TOKEN } from './admin-fixture.js';

const hash = identifierHasher(TOKEN).hash;

/** A limiter with manual blocks only, on `store`. */
const blockable = (store: Store, scope = 'login') =>
  createLimiter({ scope, policy: fixedWindow({ limit: 5, windowMs: '1m' }), blockMs: 0, store });

/** A MemoryStore that counts the keys read from its `keys()`. */
function countedStore(): { store: Store; reads: () => number } {
  const memory = new MemoryStore({ clock: () => T0, autoCleanup: false });
  let read = 0;
  const store: Store = {
    evaluate: (request) => memory.evaluate(request),
    reset: (keys) => memory.reset(keys),
    async *keys() {
      for await (const key of memory.keys()) {
        read++;
        yield key;
      }
    },
  };
  return { store, reads: () => read };
}

/** An admin over `limiters`, and a way to call it with the token. */
async function withBlocksAdmin(
  limiters: readonly Limiter[],
  run: (send: (path: string, method?: string) => Promise<Response>) => Promise<void>,
): Promise<void> {
  const admin = createAdmin({ token: TOKEN, limiters, logger: silentLogger() });
  const app = await listen(
    createServer(async (req, res) => {
      if (!(await admin(req, res))) res.writeHead(418).end();
    }),
  );
  try {
    await run((path, method = 'GET') =>
      fetch(`${app.url}${path}`, { method, headers: { Authorization: `Bearer ${TOKEN}` } }),
    );
  } finally {
    await app.close();
  }
}

describe('admin blocks: bounds and stores', () => {
  it(`lists at most ${MAX_LISTED_IDENTIFIERS} blocks, then says truncated, reading no key past the one too many`, async () => {
    const { store, reads } = countedStore();
    const limiter = blockable(store);
    for (let i = 0; i < MAX_LISTED_IDENTIFIERS + 500; i++) await limiter.block(`client-${i}`, '1h');
    await withBlocksAdmin([limiter], async (send) => {
      const body = (await (await send('/api/admin/blocks')).json()) as {
        blocks: { identifier: string }[];
        truncated?: true;
      };
      assert.equal(body.blocks.length, MAX_LISTED_IDENTIFIERS);
      assert.equal(body.truncated, true);
      assert.equal(reads(), MAX_LISTED_IDENTIFIERS + 1);
      const identifiers = body.blocks.map((block) => block.identifier);
      assert.deepEqual(identifiers, [...identifiers].sort());
    });
  });

  it('reads each store once, however many limiters share it, and stops at the full listing across stores', async () => {
    const shared = countedStore();
    const other = countedStore();
    const [login, signup, jobs] = [
      blockable(shared.store),
      blockable(shared.store, 'signup'),
      blockable(other.store, 'jobs'),
    ];
    await login.block('1.2.3.4', '1h');
    await signup.block('1.2.3.4', '1h');
    await jobs.block('1.2.3.4', '1h');
    await withBlocksAdmin([login, signup, jobs], async (send) => {
      const body = (await (await send('/api/admin/blocks')).json()) as { blocks: { scope: string }[] };
      assert.deepEqual(
        body.blocks.map((block) => block.scope),
        ['jobs', 'login', 'signup'],
      );
      assert.deepEqual([shared.reads(), other.reads()], [2, 1]);
      // The first store fills the listing: the second is not read at all.
      for (let i = 0; i < MAX_LISTED_IDENTIFIERS; i++) await login.block(`client-${i}`, '1h');
      await send('/api/admin/blocks');
      assert.equal(other.reads(), 1);
    });
  });

  it('answers 501 when a store cannot list its keys, and 503 when listing fails', async () => {
    const memory = new MemoryStore({ autoCleanup: false });
    const unlistable: Store = { evaluate: (r) => memory.evaluate(r), reset: (k) => memory.reset(k) };
    const unblockPath = `/api/admin/unblock/${hash('1.2.3.4')}?scope=login`;
    await withBlocksAdmin([blockable(unlistable)], async (send) => {
      for (const [path, method] of [
        ['/api/admin/blocks', 'GET'],
        [unblockPath, 'POST'],
      ] as const) {
        const answer = await send(path, method);
        assert.equal(answer.status, 501, path);
        assert.deepEqual(await answer.json(), {
          error: 'the store cannot list its keys (it has no keys())',
        });
      }
    });
    const failing: Store = {
      ...unlistable,
      // biome-ignore lint/correctness/useYield: a scan that fails before its first key
      async *keys() {
        throw new Error('connection lost');
      },
    };
    await withBlocksAdmin([blockable(failing)], async (send) => {
      assert.equal((await send('/api/admin/blocks')).status, 503);
      assert.equal((await send(unblockPath, 'POST')).status, 503);
    });
  });
});
