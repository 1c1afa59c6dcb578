import assert from 'node:assert/strict';
import { connect, type AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import fc from 'fast-check';
import type { FastifyInstance, InjectOptions } from 'fastify';
import type { Store } from '../../src/store/store.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { stopOwnCluster } from '../support/database.js';
import { testEngines } from '../support/engines.js';
import { generatedMessages, ingestMessages } from '../support/delivery.js';

// Hostile input on the read API: a property-based fuzzer sends requests with random and malformed paths,
// parameters, huge values, unicode, repeated keys, very long URLs and headers to the ten endpoints and to
// paths that do not exist. Whatever comes in: no 5xx, every error in the JSON error shape, memory stable.
// Seeded: a failure names the seed and the shrunk request, and reruns identically.

after(stopOwnCluster);

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const SEED = 20_251_122;
const RUNS: Record<string, number> = { postgres: 10_000, pglite: 2_500 };
const MB = 1024 * 1024;

/** Real identifiers of the indexed chain, so that part of the requests reach the database. */
interface Known {
  txIds: string[];
  blockHashes: string[];
  heights: string[];
  burnHeights: string[];
  principals: string[];
  contracts: string[];
}

async function indexChain(store: Store): Promise<Known> {
  const { messages } = await generatedMessages({
    blocks: 40,
    accounts: 20,
    seed: 'api-fuzz',
    txsPerBlock: 8,
    workers: 0,
  });
  await ingestMessages(store, messages);
  const txs = await store.sql<{ tx_id: string }[]>`
    (SELECT tx_id FROM txs ORDER BY tx_id LIMIT 30) UNION (SELECT tx_id FROM mempool_txs ORDER BY tx_id LIMIT 10)`;
  const blocks = await store.sql<
    { block_hash: string; index_block_hash: string; block_height: number; burn_block_height: number }[]
  >`
    SELECT block_hash, index_block_hash, block_height, burn_block_height FROM blocks ORDER BY block_height LIMIT 40`;
  const principals = await store.sql<{ principal: string }[]>`
    SELECT principal FROM principal_stats ORDER BY tx_count DESC, principal LIMIT 30`;
  const contracts = await store.sql<{ contract_id: string }[]>`
    SELECT DISTINCT contract_id FROM smart_contracts ORDER BY contract_id LIMIT 10`;
  return {
    txIds: txs.map((r) => r.tx_id),
    blockHashes: blocks.flatMap((b) => [b.block_hash, b.index_block_hash]),
    heights: blocks.map((b) => String(b.block_height)),
    burnHeights: blocks.map((b) => String(b.burn_block_height)),
    principals: principals.map((r) => r.principal),
    contracts: contracts.map((r) => r.contract_id),
  };
}

/** Percent-encodes the UTF-8 bytes of `s`, leaving `keep` characters as they are. */
function encodeBytes(s: string, keep: RegExp): string {
  let out = '';
  for (const ch of s) {
    if (keep.test(ch)) out += ch;
    else for (const byte of Buffer.from(ch, 'utf8')) out += `%${byte.toString(16).padStart(2, '0')}`;
  }
  return out;
}

const UNRESERVED = /^[A-Za-z0-9\-._~]$/;
/** Printable ASCII, as a careless client would put it in a URL (`%`, `?`, `#`, `/`, `&` included). */
const PRINTABLE = /^[\x21-\x7e]$/;

function valueArb(known: Known): fc.Arbitrary<string> {
  const valid = fc.constantFrom(
    ...known.txIds,
    ...known.blockHashes,
    ...known.heights,
    ...known.burnHeights,
    ...known.principals,
    ...known.contracts,
    'latest',
    'true',
    'false',
  );
  const mutatedValid = fc
    .tuple(valid, fc.nat(), fc.constantFrom('drop0x', 'upper', 'truncate', 'double', 'flip', 'pad'))
    .map(([v, n, how]) => {
      switch (how) {
        case 'drop0x':
          return v.replace(/^0x/, '');
        case 'upper':
          return v.toUpperCase();
        case 'truncate':
          return v.slice(0, n % (v.length + 1));
        case 'double':
          return v + v;
        case 'flip': {
          const i = n % Math.max(1, v.length);
          return v.slice(0, i) + (v[i] === 'z' ? 'y' : 'z') + v.slice(i + 1);
        }
        default:
          return ' '.repeat(n % 3) + v + '\t'.repeat(n % 2);
      }
    });
  const numbers = fc.oneof(
    fc.integer().map(String),
    fc.integer({ min: -10, max: 2 ** 31 + 10 }).map(String),
    fc.double().map(String),
    fc.bigInt({ min: -(10n ** 80n), max: 10n ** 80n }).map(String),
    fc.nat(400).map((n) => '9'.repeat(n + 1)),
    fc.constantFrom(
      'NaN',
      'Infinity',
      '-0',
      '1e308',
      '1e-7',
      '0x10',
      '0b11',
      '0o7',
      '+1',
      '00012',
      ' 1',
      '1.0',
      '１２',
      '٣',
    ),
  );
  const hex = fc.oneof(
    fc.stringMatching(/^0x[0-9a-f]{0,70}$/),
    fc.stringMatching(/^0x[0-9A-Fa-f]{64}$/),
    fc.stringMatching(/^[0-9a-f]{64}$/),
  );
  const principalLike = fc.oneof(
    fc.stringMatching(/^S[PMTN][0-9A-Z]{20,45}$/),
    fc.stringMatching(/^S[PT][0-9A-Z]{38}\.[a-zA-Z][a-zA-Z0-9\-_]{0,140}$/),
  );
  const junk = fc.oneof(
    fc.string({ maxLength: 40 }),
    fc.string({ unit: 'grapheme', maxLength: 30 }),
    fc.string({ unit: 'binary', maxLength: 30 }),
    fc.constantFrom(
      '',
      ' ',
      '%',
      '%%',
      '%zz',
      '%00',
      '%c0%af',
      '%E0%A4%A',
      '..',
      '../..',
      '%2e%2e%2f',
      '\u0000',
      '💥',
      '\u202e',
      'null',
      '[]',
      '{}',
      "'; DROP TABLE txs;--",
      '<script>',
      'a,b,,c',
      ',',
    ),
    fc.nat(5_000).map((n) => 'a'.repeat(n)),
  );
  return fc.oneof(
    { arbitrary: valid, weight: 5 },
    { arbitrary: mutatedValid, weight: 3 },
    { arbitrary: numbers, weight: 3 },
    { arbitrary: hex, weight: 2 },
    { arbitrary: principalLike, weight: 2 },
    { arbitrary: junk, weight: 4 },
  );
}

/** How a value goes into the URL: encoded, printable as is, or double-encoded. */
function encodedArb(value: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return fc.tuple(value, fc.constantFrom('encode', 'encode', 'encode', 'raw', 'double')).map(([v, how]) => {
    if (how === 'raw') return encodeBytes(v, PRINTABLE);
    const once = encodeBytes(v, UNRESERVED);
    return how === 'double' ? encodeBytes(once, UNRESERVED) : once;
  });
}

const QUERY_KEYS = [
  'limit',
  'offset',
  'height',
  'unanchored',
  'until_block',
  'tx_id',
  'contract_id',
  'event_limit',
  'event_offset',
  'exclude_function_args',
  'cursor',
  'type',
  'sender_address',
  'recipient_address',
  'address',
  'order_by',
  'order',
  'principal',
  'asset_identifiers',
  'tx_metadata',
  'include_metadata',
  'include_mempool',
  'block_height',
  'block_hash',
];

function requestArb(known: Known): fc.Arbitrary<InjectOptions & { url: string }> {
  const value = encodedArb(valueArb(known));
  const paths: fc.Arbitrary<string>[] = [
    value.map((p) => `/extended/v1/address/${p}/balances`),
    value.map((t) => `/extended/v1/tx/${t}`),
    value.map((h) => `/extended/v2/blocks/${h}`),
    fc.constant('/extended/v1/tx/multiple'),
    fc.constant('/extended/v1/tx/mempool/stats'),
    fc.constant('/extended/v2/mempool/fees'),
    fc.constant('/extended/v2/smart-contracts/status'),
    value.map((p) => `/extended/v1/address/${p}/transactions_with_transfers`),
    fc.tuple(value, value).map(([p, t]) => `/extended/v1/address/${p}/${t}/with_transfers`),
    value.map((h) => `/extended/v1/block/by_burn_block_height/${h}`),
    value.map((h) => `/extended/v1/block/${h}`),
    value.map((h) => `/extended/v1/block/by_height/${h}`),
    value.map((h) => `/extended/v1/block/by_burn_block_hash/${h}`),
    value.map((h) => `/extended/v1/microblock/${h}`),
    value.map((p) => `/extended/v2/addresses/${p}/transactions`),
    fc.tuple(value, value).map(([p, t]) => `/extended/v2/addresses/${p}/transactions/${t}/events`),
    value.map((p) => `/extended/v1/address/${p}/nonces`),
    value.map((p) => `/extended/v1/address/${p}/stx`),
    value.map((p) => `/extended/v2/addresses/${p}/balances/stx`),
    value.map((p) => `/extended/v2/addresses/${p}/balances/ft`),
    fc.constant('/extended/v1/tx'),
    fc.constant('/extended/v1/tx/mempool'),
    value.map((p) => `/extended/v1/address/${p}/mempool`),
    fc.constant('/extended/v1/tokens/nft/holdings'),
    value.map((c) => `/extended/v1/contract/${c}`),
    value.map((id) => `/extended/v1/search/${id}`),
    fc.constant('/extended/v2/blocks'),
    value.map((h) => `/extended/v2/blocks/${h}/transactions`),
    fc.constant('/extended/v2/burn-blocks'),
    value.map((h) => `/extended/v2/burn-blocks/${h}`),
    value.map((h) => `/extended/v2/burn-blocks/${h}/blocks`),
    // paths that exist nowhere, or almost exist
    fc.array(value, { minLength: 0, maxLength: 6 }).map((parts) => `/${parts.join('/')}`),
    fc.array(value, { maxLength: 3 }).map((parts) => `/extended/v1/${parts.join('/')}`),
    fc.constantFrom(
      '/',
      '//',
      '/extended',
      '/extended/v1/tx/',
      '/extended/v2/blocks/',
      '/extended//v1/tx/multiple',
      '/EXTENDED/V1/TX/MULTIPLE',
      '/extended/v1/tx/multiple/',
    ),
  ];
  const query = fc.array(
    fc.tuple(
      fc.oneof({ arbitrary: fc.constantFrom(...QUERY_KEYS), weight: 4 }, { arbitrary: value, weight: 1 }),
      value,
    ),
    { maxLength: 8 },
  );
  const headers = fc.dictionary(
    fc.constantFrom(
      'if-none-match',
      'accept',
      'x-api-key',
      'x-forwarded-for',
      'content-type',
      'range',
      'origin',
      'accept-encoding',
      'x-custom',
    ),
    fc.oneof(
      fc.string({ maxLength: 60 }),
      fc.nat(20_000).map((n) => 'W/"' + 'x'.repeat(n) + '"'),
    ),
    { maxKeys: 3 },
  );
  return fc
    .record({
      method: fc.constantFrom(
        'GET',
        'GET',
        'GET',
        'GET',
        'GET',
        'GET',
        'HEAD',
        'OPTIONS',
        'POST',
        'PUT',
        'DELETE',
      ),
      path: fc.oneof(...paths),
      query,
      headers,
      body: fc.option(fc.string({ maxLength: 200 }), { nil: undefined }),
    })
    .map(({ method, path, query, headers, body }) => {
      const search = query.map(([k, v]) => (v === '' && k.length % 2 === 0 ? k : `${k}=${v}`)).join('&');
      const url = search ? `${path}?${search}` : path;
      const sanitized = Object.fromEntries(
        Object.entries(headers).map(([k, v]) => [k, v.replace(/[^\x20-\x7e]/g, '?')]),
      );
      return {
        method: method as InjectOptions['method'],
        url,
        headers: sanitized,
        ...(body !== undefined && method !== 'GET' && method !== 'HEAD' ? { payload: body } : {}),
      };
    });
}

const ERROR_KEYS = new Set(['statusCode', 'code', 'error', 'message']);

/** Why an answer breaks the rules, or null. */
function violation(
  method: string,
  path: string,
  status: number,
  headers: Record<string, unknown>,
  body: string,
): string | null {
  if (status >= 500) return `server error ${status}: ${body.slice(0, 300)}`;
  if (status < 400 || method === 'HEAD') return null;
  if (!String(headers['content-type'] ?? '').startsWith('application/json')) {
    return `error ${status} is not JSON (${String(headers['content-type'])})`;
  }
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(body) as Record<string, unknown>;
  } catch {
    return `error ${status} body does not parse: ${body.slice(0, 200)}`;
  }
  // a search that finds nothing answers the original's own 404 body (docs/upstream.md C.17)
  if (status === 404 && path.startsWith('/extended/v1/search/') && json.found === false) {
    const kind = (json.result as { entity_type?: unknown } | undefined)?.entity_type;
    return typeof kind === 'string' && typeof json.error === 'string'
      ? null
      : `bad search 404: ${body.slice(0, 200)}`;
  }
  if (json.statusCode !== status) return `error body statusCode ${String(json.statusCode)} for ${status}`;
  if (typeof json.error !== 'string' || typeof json.message !== 'string')
    return `error body lacks error/message: ${body.slice(0, 200)}`;
  const extra = Object.keys(json).filter((k) => !ERROR_KEYS.has(k));
  if (extra.length > 0) return `error body has extra keys ${extra.join(', ')}`;
  return null;
}

function memory() {
  gc();
  gc();
  const { heapUsed, rss } = process.memoryUsage();
  return { heapUsed, rss };
}

for (const engine of testEngines(import.meta.url)) {
  describe(`read API under fuzzed requests (${engine})`, () => {
    let api: TestApi | undefined;
    let app: FastifyInstance;
    let known: Known;
    before(async () => {
      api = await startTestApi({ engine });
      known = await indexChain(api.store);
      app = api.app;
    });
    after(async () => {
      await api?.close();
    });

    test(`${RUNS[engine].toLocaleString('en')} random and malformed requests: no 5xx, JSON errors, memory stable`, async () => {
      const statuses = new Map<number, number>();
      let count = 0;
      const send = async (req: InjectOptions & { url: string }) => {
        const res = await app.inject(req);
        count++;
        statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
        const problem = violation(String(req.method), req.url, res.statusCode, res.headers, res.body);
        if (problem) throw new Error(`${req.method} ${req.url.slice(0, 400)} → ${problem}`);
      };
      const requests = requestArb(known);
      const run = (seed: number, numRuns: number) =>
        fc.assert(fc.asyncProperty(requests, send), { seed, numRuns, endOnFailure: true });
      // Warm up (compiled serializers, prepared statements, the allocator's pages for large strings) before
      // the first measurement, then two halves: the heap must come back to where it was, and the process
      // must not keep growing.
      await run(SEED + 1, 2_000);
      const start = memory();
      await run(SEED, RUNS[engine] / 2);
      const middle = memory();
      await run(SEED + 2, RUNS[engine] / 2);
      const end = memory();

      const by = (test: (s: number) => boolean) =>
        [...statuses].filter(([s]) => test(s)).reduce((n, [, c]) => n + c, 0);
      console.log(
        `api fuzz (${engine}): ${count} requests, 2xx ${by((s) => s < 300)}, 3xx ${by((s) => s >= 300 && s < 400)}, ` +
          `4xx ${by((s) => s >= 400 && s < 500)}, 5xx ${by((s) => s >= 500)}; statuses ${JSON.stringify(Object.fromEntries([...statuses].sort(([a], [b]) => a - b)))}; ` +
          `heap after GC ${[start, middle, end].map((m) => (m.heapUsed / MB).toFixed(1)).join(' → ')} MB, ` +
          `rss ${[start, middle, end].map((m) => (m.rss / MB).toFixed(0)).join(' → ')} MB`,
      );
      assert.equal(
        by((s) => s >= 500),
        0,
      );
      assert.ok(count >= RUNS[engine]);
      // Both kinds of answers were exercised, not only rejections.
      assert.ok(by((s) => s === 200) > count / 20, `200s: ${by((s) => s === 200)}`);
      assert.ok(by((s) => s === 400) > count / 20, `400s: ${by((s) => s === 400)}`);
      // Nothing is retained per request: the heap after is within a few MB of the heap before.
      assert.ok(
        end.heapUsed - start.heapUsed < 16 * MB,
        `heap grew ${((end.heapUsed - start.heapUsed) / MB).toFixed(1)} MB`,
      );
    });
  });
}

/** Sends raw bytes over a socket and returns the status and body of the answer. */
function rawRequest(port: number, text: string): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let answered = false;
    socket.on('data', (d: Buffer) => {
      answered = true;
      chunks.push(d);
    });
    socket.on('error', (err) => (answered ? undefined : reject(err)));
    socket.on('close', () => {
      const all = Buffer.concat(chunks).toString('utf8');
      const end = all.indexOf('\r\n\r\n');
      resolve({
        status: Number(/^HTTP\/1\.1 (\d{3})/.exec(all)?.[1] ?? 0),
        headers: end >= 0 ? all.slice(0, end) : all,
        body: end >= 0 ? all.slice(end + 4) : '',
      });
    });
    // Not `end()`: a half-closed connection is dropped by the server before it answers.
    socket.write(text);
  });
}

describe('read API: oversized and malformed requests over a real socket (postgres)', () => {
  test('very long URLs and headers get 414/431, garbage 400, all JSON; the server keeps serving', async () => {
    const { app, close } = await startTestApi({ engine: 'postgres' });
    try {
      await app.listen({ host: '127.0.0.1', port: 0 });
      const port = (app.server.address() as AddressInfo).port;
      const get = (target: string, extraHeaders = '') =>
        rawRequest(
          port,
          `GET ${target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n${extraHeaders}\r\n`,
        );
      const cases: {
        name: string;
        res: () => Promise<{ status: number; headers: string; body: string }>;
        status: number;
      }[] = [
        {
          name: 'path parameter of 5,000 chars',
          res: () => get(`/extended/v1/tx/0x${'a'.repeat(5_000)}`),
          status: 414,
        },
        {
          name: 'principal of 1,500 chars',
          res: () => get(`/extended/v1/address/${'S'.repeat(1_500)}/balances`),
          status: 414,
        },
        {
          name: 'URL of 20 KB',
          res: () => get(`/extended/v2/blocks/1?x=${'y'.repeat(20_000)}`),
          status: 431,
        },
        {
          name: 'header of 20 KB',
          res: () => get('/extended/v2/blocks/1', `X-Big: ${'z'.repeat(20_000)}\r\n`),
          status: 431,
        },
        {
          name: '3,000 headers',
          res: () =>
            get('/extended/v2/blocks/1', Array.from({ length: 3_000 }, (_, i) => `X-H${i}: v\r\n`).join('')),
          status: 431,
        },
        {
          name: 'query of 8 KB of repeated keys',
          res: () => get(`/extended/v1/tx/multiple?${'tx_id=0x00&'.repeat(700)}`),
          status: 400,
        },
        { name: 'not HTTP', res: () => rawRequest(port, 'HELLO THERE\r\n\r\n'), status: 400 },
        { name: 'bad percent-encoding', res: () => get('/extended/v1/tx/%E0%A4%A'), status: 400 },
        { name: 'unknown route', res: () => get('/extended/v9/nothing'), status: 404 },
      ];
      for (const c of cases) {
        const res = await c.res();
        assert.equal(res.status, c.status, `${c.name}: ${res.headers.split('\r\n')[0]} ${res.body}`);
        const body = JSON.parse(res.body) as Record<string, unknown>;
        assert.equal(body.statusCode, c.status, c.name);
        assert.equal(typeof body.error, 'string', c.name);
        assert.equal(typeof body.message, 'string', c.name);
        assert.match(res.headers, /content-type: application\/json/i, c.name);
      }
      // Still serving.
      const ok = await get('/extended/v2/mempool/fees');
      assert.equal(ok.status, 200);
    } finally {
      await close();
    }
  });
});
