// The ceiling of the HTTP benchmark: a bare Fastify route doing one primary-key lookup on the same database,
// with the same pool settings as the API (one typed config, the same client options), in its own process.
// No schemas, no plugins: what a request costs when the handler is one indexed read and JSON.stringify.
//
//   DATABASE_URL=postgres://… API_PORT=4000 npx tsx bench/ceiling-server.ts
//
// GET /ceiling/block/:index_block_hash → the block's row (by the primary key of `blocks`), 404 if unknown.
import Fastify from 'fastify';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/store/db.js';

const config = loadConfig();
const db = await openDatabase({
  url: config.DATABASE_URL,
  pgliteDir: config.PGLITE_DIR,
  poolMax: config.DB_POOL_MAX,
  connectTimeoutMs: config.DB_CONNECT_TIMEOUT_MS,
  applicationName: 'bench-ceiling',
});
const app = Fastify({ logger: false });

app.get<{ Params: { hash: string } }>('/ceiling/block/:hash', async (request, reply) => {
  const [row] = await db.sql`
    SELECT index_block_hash, block_hash, block_height, burn_block_time, tx_count
    FROM blocks WHERE index_block_hash = ${request.params.hash}`;
  if (!row) return reply.code(404).send({ error: 'not found' });
  return row;
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
