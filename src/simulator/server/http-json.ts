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
 * or once that many bytes have arrived). A refused body is read no further: see `refuseBody`.
 */
export async function readJsonBody(req: IncomingMessage, maxBytes: number): Promise<unknown> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/json') throw new RefusedBody(400, 'it must be sent as application/json');
  const tooLarge = () => new RefusedBody(413, `it is larger than ${maxBytes} bytes`);
  if (Number(req.headers['content-length']) > maxBytes) throw tooLarge();
  const text = await new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        req.pause();
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

/**
 * Answers a refused body. When the rest of it has not arrived, the connection closes once the answer is out rather
 * than read on (a client could send for ever) or carry the next request after a body never read to its end.
 */
export function refuseBody(req: IncomingMessage, res: ServerResponse, body: unknown, status: number): void {
  if (!req.complete) {
    res.setHeader('Connection', 'close');
    res.once('finish', () => req.socket.destroy());
  }
  sendJson(res, status, body);
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.end(JSON.stringify(body));
}
