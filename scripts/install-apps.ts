// The small apps the install check builds and runs against the installed package: each limits a loopback server
// until it answers 429 and prints the statuses it got.

/** What every app prints: its limit of three requests, then the rejection. */
export const LIMITED = '200,200,200,429';

/**
 * Asks `url` until it answers 429 (ten requests at most) and prints the statuses, comma-separated; the same text in
 * JavaScript and TypeScript, with no top-level await so that it runs as CommonJS too.
 */
function askUntilRejected(typed: boolean): string {
  return `async function askUntilRejected(url${typed ? ': string' : ''}) {
  const statuses${typed ? ': number[]' : ''} = [];
  while (statuses.at(-1) !== 429 && statuses.length < 10) statuses.push((await fetch(url)).status);
  process.stdout.write(statuses.join(','));
}`;
}

/**
 * A node:http server limited by `tollgate/node` to three requests a minute, its policy from `tollgate`: the main
 * entry and a subpath, which must come from one build of the package. `typed`: as TypeScript.
 */
export function limitedHttpApp(typed: boolean): string {
  return `import { createServer } from 'node:http';
${typed ? "import type { AddressInfo } from 'node:net';\n" : ''}import { fixedWindow } from 'tollgate';
import { rateLimit } from 'tollgate/node';

${askUntilRejected(typed)}

const limit = rateLimit({ policy: fixedWindow({ limit: 3, windowMs: '1m' }) });
const server = createServer(async (req, res) => {
  if (await limit(req, res)) res.end('ok');
});
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address()${typed ? ' as AddressInfo' : ''};
  askUntilRejected(\`http://127.0.0.1:\${port}/\`).finally(() => server.close());
});
`;
}

/** A NestJS app whose one route `tollgate/nestjs`'s guard limits to three requests a minute, TollgateModule's default. */
export function limitedNestApp(): string {
  return `import 'reflect-metadata';
import { Controller, Get, Module, UseGuards } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { RateLimitGuard, TollgateModule } from 'tollgate/nestjs';

@Controller()
class AppController {
  @Get()
  @UseGuards(RateLimitGuard)
  hello() {
    return { ok: true };
  }
}

@Module({ imports: [TollgateModule.forRoot({ requestsPerMinute: 3 })], controllers: [AppController] })
class AppModule {}

${askUntilRejected(true)}

async function main() {
  const app = await NestFactory.create(AppModule, { logger: false });
  await app.listen(0, '127.0.0.1');
  try {
    await askUntilRejected(await app.getUrl());
  } finally {
    await app.close();
  }
}
main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
`;
}
