// A POST whose headers the server has taken (it said to continue), its body begun but not finished: a request in flight, held.
import { request } from 'node:http';

export interface StartedUpload {
  /** Sends the rest of the body. */
  readonly finish: () => void;
  /** Drops the connection with the body unfinished. */
  readonly cut: () => void;
  /** The response, or a rejection if the connection is cut. */
  readonly answer: Promise<{ status: number; body: string }>;
}

/** POSTs `body` as JSON to `url`, sending its first `begun` characters once the server says to continue. */
export function startedUpload(url: string | URL, body: string, begun = 10): Promise<StartedUpload> {
  return new Promise((taken, failed) => {
    const req = request(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        expect: '100-continue',
      },
      agent: false,
    });
    const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
      req.on('error', reject);
      req.on('response', (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      });
    });
    answer.catch(failed);
    req.once('continue', () => {
      req.write(body.slice(0, begun));
      taken({ finish: () => req.end(body.slice(begun)), cut: () => req.destroy(), answer });
    });
    req.flushHeaders();
  });
}
