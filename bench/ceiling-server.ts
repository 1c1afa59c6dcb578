// The two ceilings of the HTTP benchmark, in their own process:
//   GET /ceiling/bare → a constant JSON object the size of a block answer, no database: what Fastify itself
//     costs per request on this machine (with the load tool sharing the cores);
//   GET /ceiling/block/:index_block_hash → one primary-key lookup on the same database, with the same pool
//     settings as the API (one typed config, the same client options), 404 if unknown: what a request costs
//     when the handler is one indexed read and JSON.stringify.
//   GET /ceiling/tx/:tx_id → the mined tx row the API's `GET /extended/v1/tx/:tx_id` reads on a miss, by the
//     same reader (`batchedMinedTxReads`: the same statement, the same batching of reads arriving together,
//     its first page of 20 events), sent as postgres.js decodes it (JSON.stringify): what the read alone
//     costs, without the API's render, schema serializer, ETag, caches and hooks. Not a suite case: only
//     `bench/profile-http.ts` asks it (its `read alone` case), beside the API's cold tx by id.
//   GET /ceiling/burn-block/:burn_block_height → likewise, the block the API's `GET
//     /extended/v1/block/by_burn_block_height/:h` reads, by the same reader (`batchedBlockByBurnHeightReads`), its
//     ~15 KB of tx ids on the 1M chain included (put in as the JSON text they are), the rest with JSON.stringify: profile-http's other `read alone` case.
// No schemas, no plugins.
//
//   DATABASE_URL=postgres://… API_PORT=4000 npx tsx bench/ceiling-server.ts
import Fastify from 'fastify';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/store/db.js';
import { batchedBlockByBurnHeightReads } from '../src/store/read/blocks.js';
import { batchedMinedTxReads } from '../src/store/read/txs.js';

const config = loadConfig();
const db = await openDatabase({
  url: config.DATABASE_URL,
  pgliteDir: config.PGLITE_DIR,
  poolMax: config.DB_POOL_MAX,
  connectTimeoutMs: config.DB_CONNECT_TIMEOUT_MS,
  applicationName: 'bench-ceiling',
});
const app = Fastify({ logger: false });

/** About the size of `GET /extended/v2/blocks/:height` (~800 bytes): hashes, heights, times, costs. */
const BARE_ANSWER = {
  canonical: true,
  height: 123_456,
  hash: '0x' + 'a'.repeat(64),
  block_time: 1_700_000_000,
  block_time_iso: '2023-11-14T22:13:20.000Z',
  tenure_height: 12_345,
  index_block_hash: '0x' + 'b'.repeat(64),
  parent_block_hash: '0x' + 'c'.repeat(64),
  parent_index_block_hash: '0x' + 'd'.repeat(64),
  burn_block_time: 1_700_000_000,
  burn_block_time_iso: '2023-11-14T22:13:20.000Z',
  burn_block_hash: '0x' + 'e'.repeat(64),
  burn_block_height: 876_543,
  miner_txid: '0x' + 'f'.repeat(64),
  tx_count: 42,
  execution_cost_read_count: 1234,
  execution_cost_read_length: 123_456,
  execution_cost_runtime: 12_345_678,
  execution_cost_write_count: 123,
  execution_cost_write_length: 12_345,
};

app.get('/ceiling/bare', async () => BARE_ANSWER);

app.get<{ Params: { hash: string } }>('/ceiling/block/:hash', async (request, reply) => {
  const [row] = await db.sql`
    SELECT index_block_hash, block_hash, block_height, burn_block_time, tx_count
    FROM blocks WHERE index_block_hash = ${request.params.hash}`;
  if (!row) return reply.code(404).send({ error: 'not found' });
  return row;
});

const readMinedTx = batchedMinedTxReads(() => db.sql);
const FIRST_EVENT_PAGE = { offset: 0, limit: 20 };

app.get<{ Params: { tx_id: string } }>('/ceiling/tx/:tx_id', async (request, reply) => {
  const row = await readMinedTx(request.params.tx_id, { unanchored: false }, FIRST_EVENT_PAGE);
  if (!row) return reply.code(404).send({ error: 'not found' });
  return row;
});

const readBlockAtBurnHeight = batchedBlockByBurnHeightReads(() => db.sql);

app.get<{ Params: { height: string } }>('/ceiling/burn-block/:height', async (request, reply) => {
  const block = await readBlockAtBurnHeight(Number(request.params.height));
  if (!block) return reply.code(404).send({ error: 'not found' });
  // the tx ids are JSON text already: put in as they are, as the API does, not escaped as a string
  const { txs_json: txs, ...rest } = block;
  return reply.type('application/json').send(`{"block":${JSON.stringify(rest)},"txs":${txs}}`);
});

await app.listen({ host: config.API_HOST, port: config.API_PORT });
const stop = () => {
  void app
    .close()
    .then(() => db.close())
    .then(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
