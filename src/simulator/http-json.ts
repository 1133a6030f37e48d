// JSON over plain node:http: a request body read within a byte limit, and a JSON response.
import type { IncomingMessage, ServerResponse } from 'node:http';

/** A body refused before it reached the application: `status` is 413 (too large) or 400 (not JSON). */
export class RefusedBody extends Error {
  constructor(
    readonly status: 400 | 413,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The request body parsed as JSON. Only `application/json` is read, as a browser cannot send it cross-site
 * without asking first. A body over `maxBytes` is refused as soon as it is known to be (from its declared length,
 * or once that many bytes have arrived), and the rest of it is discarded, not kept.
 */
export async function readJsonBody(req: IncomingMessage, maxBytes: number): Promise<unknown> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/json') {
    req.resume();
    throw new RefusedBody(400, 'it must be sent as application/json');
  }
  const tooLarge = () => new RefusedBody(413, `it is larger than ${maxBytes} bytes`);
  if (Number(req.headers['content-length']) > maxBytes) {
    req.resume();
    throw tooLarge();
  }
  const text = await new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      // Past the limit, read on without keeping anything, so the client can finish sending and read the answer.
      if (size > maxBytes) return;
      size += chunk.length;
      if (size > maxBytes) {
        chunks.length = 0;
        reject(tooLarge());
      } else {
        chunks.push(chunk);
      }
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new RefusedBody(400, `it is not JSON (${(error as Error).message})`);
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.end(JSON.stringify(body));
}
