// The HTTP load generator, run as a child process so that it never shares the event loop of the server it measures.
import { createHistogram } from 'node:perf_hooks';
import autocannon from 'autocannon';
import { keySequence } from './keys.js';

export interface LoadRequest {
  readonly url: string;
  readonly connections: number;
  readonly seconds: number;
  readonly keys: number;
}

export interface LoadReply {
  readonly rps: number;
  readonly p50Ms: number;
  readonly p95Ms: number;
  readonly p99Ms: number;
  readonly non2xx: number;
  readonly errors: number;
}

function run({ url, connections, seconds, keys }: LoadRequest): Promise<LoadReply> {
  const sequence = keySequence(keys, 65_536);
  let next = 0;
  // autocannon reports no p95, so latencies are kept here too (µs).
  const histogram = createHistogram();
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url,
        connections,
        duration: seconds,
        requests: [
          {
            method: 'GET',
            // Each request comes from one of the clients, through the one proxy hop the apps trust.
            setupRequest: (request) => {
              request.headers = { 'x-forwarded-for': sequence[next++ & 65_535] as string };
              return request;
            },
          },
        ],
      },
      (error, result) => {
        if (error !== null) {
          reject(error);
          return;
        }
        const ms = (p: number) => histogram.percentile(p) / 1000;
        resolve({
          rps: result.requests.total / result.duration,
          p50Ms: ms(50),
          p95Ms: ms(95),
          p99Ms: ms(99),
          non2xx: result.non2xx,
          errors: result.errors + result.timeouts,
        });
      },
    );
    instance.on('response', (_client, _status, _bytes, responseMs) => {
      histogram.record(Math.max(1, Math.round(responseMs * 1000)));
    });
  });
}

process.on('message', (request: LoadRequest) => {
  run(request).then(
    (reply) => process.send?.({ reply }),
    (error: Error) => process.send?.({ error: error.message }),
  );
});
