// A real nginx in front of an upstream, asking /check through auth_request: exactly the limit passes, then 429s.
// Skipped where nginx is not installed, unless REQUIRE_NGINX=1 says it must be (CI), which fails instead.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { loadServiceConfig } from '../../../src/service/config/load.js';
import { createDecider } from '../../../src/service/engine/decider.js';
import { startHttpServer } from '../../../src/service/http/http-server.js';
import { MemoryStore } from '../../../src/stores/memory/memory-store.js';
import { NGINX_BIN, type NginxProcess, nginxInstalled, startNginx } from './nginx-process.js';

const required = process.env.REQUIRE_NGINX === '1';
/** Half past: the hour's window resets in 30 minutes, so every answer is the same whenever the test runs. */
const NOW = Date.UTC(2026, 0, 1, 12, 30);

/** Five requests an hour per client address; the HTTP check makes that descriptor of each request. */
const CONFIG = `
domain: edge
descriptors:
  - key: remote_address
    rate_limit: { unit: hour, requests_per_unit: 5 }
tollgate:
  http_check:
    descriptors:
      - entries:
          - remote_address: {}
`;
const skip = nginxInstalled() || required ? false : `nginx is not installed at ${NGINX_BIN} (set NGINX_BIN)`;

/**
 * The pattern docs/service.md shows: every request asks /check first. nginx's auth_request understands only 2xx,
 * 401 and 403, so the check denies with 403 (`?deny=403`, or `deny_status: 403` in the rules), and error_page
 * turns that 403 into the client's 429; auth_request_set carries the check's RateLimit and Retry-After fields onto
 * both answers. The subrequest sends no body, and tells the check the client's address and the URI it asked for.
 */
function serverBlock(checkPort: number, upstreamPort: number) {
  return (port: number) => `
    listen 127.0.0.1:${port};
    location = /_ready { return 204; }

    location / {
      auth_request /_check;
      auth_request_set $ratelimit $upstream_http_ratelimit;
      auth_request_set $ratelimit_policy $upstream_http_ratelimit_policy;
      auth_request_set $retry_after $upstream_http_retry_after;
      add_header RateLimit $ratelimit always;
      add_header RateLimit-Policy $ratelimit_policy always;
      error_page 403 =429 /_limited;
      proxy_pass http://127.0.0.1:${upstreamPort};
    }

    location = /_check {
      internal;
      proxy_pass http://127.0.0.1:${checkPort}/check?deny=403;
      proxy_pass_request_body off;
      proxy_set_header Content-Length "";
      proxy_set_header X-Forwarded-For $remote_addr;
      proxy_set_header X-Original-URI $request_uri;
    }

    location = /_limited {
      internal;
      add_header RateLimit $ratelimit always;
      add_header RateLimit-Policy $ratelimit_policy always;
      add_header Retry-After $retry_after always;
      default_type text/plain;
      return 429 "rate limit exceeded\\n";
    }
`;
}

describe('nginx auth_request in front of /check', { skip }, () => {
  let nginx: NginxProcess | undefined;
  const stops: (() => Promise<void>)[] = [];
  let upstreamHits = 0;

  before(async () => {
    assert.ok(nginxInstalled(), `REQUIRE_NGINX=1 is set, but nginx is not installed at ${NGINX_BIN}`);
    const upstream = createServer((_req, res) => {
      upstreamHits++;
      res.end('from the upstream');
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    stops.push(() => new Promise((resolve) => upstream.close(() => resolve())));
    const config = loadServiceConfig([{ path: 'edge.yaml', text: CONFIG }]);
    const store = new MemoryStore({ clock: () => NOW });
    stops.push(async () => store.close());
    const decider = createDecider({ store });
    const check = await startHttpServer({
      host: '127.0.0.1',
      port: 0,
      shouldRateLimit: (request) => decider.shouldRateLimit(config, request),
      config: () => config,
      healthy: async () => ({ ok: true }),
      metricsText: () => '',
    });
    stops.push(() => check.close(0));
    nginx = await startNginx(serverBlock(check.port, (upstream.address() as AddressInfo).port));
    stops.push(() => (nginx as NginxProcess).stop());
  });

  after(async () => {
    for (const stop of stops.reverse()) await stop();
  });

  it('passes exactly the limit to the upstream, then answers 429 with Retry-After', async () => {
    const answers: [number, string][] = [];
    for (let i = 0; i < 8; i++) {
      const response = await fetch(`http://127.0.0.1:${nginx?.port}/orders?page=${i}`);
      answers.push([response.status, await response.text()]);
    }
    assert.deepEqual(answers, [
      ...Array.from({ length: 5 }, () => [200, 'from the upstream']),
      ...Array.from({ length: 3 }, () => [429, 'rate limit exceeded\n']),
    ]);
    assert.equal(upstreamHits, 5);
    const limited = await fetch(`http://127.0.0.1:${nginx?.port}/orders`);
    assert.equal(limited.status, 429);
    assert.equal(limited.headers.get('retry-after'), '1800');
    assert.match(limited.headers.get('ratelimit') ?? '', /;r=0;t=1800$/);
    assert.match(limited.headers.get('ratelimit-policy') ?? '', /;q=5;w=3600$/);
  });
});
