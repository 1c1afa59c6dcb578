import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import pino from 'pino';
import { serve } from '../../src/cli/serve.js';
import { readTsv, type RecordedMessage } from '../../src/protocol/tsv.js';
import { createTestDatabaseUrl, stopOwnCluster } from '../support/database.js';
import { baseUrlOf } from '../support/http.js';
import { serveConfig, TESTNET } from '../support/serve-config.js';
import { fixtureFile } from '../support/shared.js';

// What an operator reads at the default level (info): a line per API request, a line per indexed block.

after(stopOwnCluster);

interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

/** A logger at info whose lines are kept, parsed. */
function capturingLogger() {
  const lines: LogLine[] = [];
  const logger = pino(
    { level: 'info', base: null },
    { write: (line: string) => lines.push(JSON.parse(line) as LogLine) },
  );
  return { logger, lines };
}

async function firstMessages(count: number): Promise<RecordedMessage[]> {
  const messages: RecordedMessage[] = [];
  for await (const m of readTsv(fixtureFile('mocknet'))) {
    messages.push(m);
    if (messages.length === count) break;
  }
  return messages;
}

async function running(env: Record<string, string>) {
  const { logger, lines } = capturingLogger();
  const config = serveConfig({ DATABASE_URL: await createTestDatabaseUrl(), ...TESTNET, ...env });
  const service = await serve(config, logger, 'both');
  return { service, lines, api: baseUrlOf(service.api!), observer: baseUrlOf(service.observer!) };
}

describe('logs at info', () => {
  test('one line per indexed block (height, txs, ms) and one per request (method, route, URL, status, ms, IP)', async () => {
    const { service, lines, api, observer } = await running({});
    try {
      const [block1] = await firstMessages(1);
      const posted = await fetch(`${observer}${block1.path}`, { method: 'POST', body: block1.payload });
      assert.equal(posted.status, 200);
      const indexed = lines.filter((l) => l.msg === 'block indexed');
      assert.equal(indexed.length, 1);
      const txs = (JSON.parse(block1.payload) as { transactions: unknown[] }).transactions.length;
      assert.deepEqual(
        { ...indexed[0], time: 0, ms: 0 },
        { level: 30, time: 0, height: 1, txs, ms: 0, msg: 'block indexed' },
      );
      assert.equal(typeof indexed[0].ms, 'number');

      // the service's own in-process calls (the demo checking the URLs it prints) are not client requests
      const injected = await service.api!.inject({ method: 'GET', url: '/extended/v2/blocks/latest' });
      assert.equal(injected.statusCode, 200);
      for (const url of ['/extended/v2/blocks/1', '/extended/v2/blocks/abc', '/no/such/route'])
        await fetch(`${api}${url}`);
      const requests = lines.filter((l) => l.msg === 'request');
      assert.deepEqual(
        requests.map(({ method, route, url, status, ip, level }) => ({
          method,
          route,
          url,
          status,
          ip,
          level,
        })),
        [
          {
            method: 'GET',
            route: '/extended/v2/blocks/:height_or_hash',
            url: '/extended/v2/blocks/1',
            status: 200,
            ip: '127.0.0.1',
            level: 30,
          },
          {
            method: 'GET',
            route: '/extended/v2/blocks/:height_or_hash',
            url: '/extended/v2/blocks/abc',
            status: 400,
            ip: '127.0.0.1',
            level: 30,
          },
          {
            method: 'GET',
            route: 'unmatched',
            url: '/no/such/route',
            status: 404,
            ip: '127.0.0.1',
            level: 30,
          },
        ],
      );
      for (const r of requests) assert.ok(typeof r.ms === 'number' && r.ms >= 0 && r.ms < 60_000);
      // the observer's own requests are not API requests
      assert.ok(!requests.some((r) => String(r.url).startsWith('/new_')));
    } finally {
      await service.stop();
    }
  });

  test('LOG_REQUESTS=false: no request lines; blocks are still logged', async () => {
    const { service, lines, api, observer } = await running({ LOG_REQUESTS: 'false' });
    try {
      const [block1] = await firstMessages(1);
      await fetch(`${observer}${block1.path}`, { method: 'POST', body: block1.payload });
      assert.equal((await fetch(`${api}/extended/v2/blocks/1`)).status, 200);
      assert.equal(lines.filter((l) => l.msg === 'request').length, 0);
      assert.equal(lines.filter((l) => l.msg === 'block indexed').length, 1);
    } finally {
      await service.stop();
    }
  });
});
