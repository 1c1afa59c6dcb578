// One large observer message and the reads beside it (bench/stall.ts), on its own: a throwaway PostgreSQL
// cluster or PGlite in memory. `npm run bench` runs the same measurement with its targets.
//
//   npx tsx bench/observer-stall.ts [--engine postgres|pglite] [--txs 3000]
//
// --txs 3000 gives a 4 MB block, --txs 30000 a 40 MB one (the chain is generated once into bench/out/).
import { parseArgs } from 'node:util';
import { startPostgres, type TestPostgres } from '../test/support/postgres.js';
import { measureStall } from './stall.js';

const { values } = parseArgs({
  options: {
    engine: { type: 'string', default: 'postgres' },
    txs: { type: 'string', default: '3000' },
  },
});
const engine = values.engine;
if (engine !== 'postgres' && engine !== 'pglite') throw new Error('--engine is postgres or pglite');

let postgres: TestPostgres | undefined;
try {
  let databaseUrl = '';
  if (engine === 'postgres') {
    postgres = await startPostgres();
    databaseUrl = await postgres.createDatabase('stall');
  }
  const result = await measureStall({ databaseUrl, txs: Number(values.txs), dir: 'bench/out' });
  console.log(JSON.stringify(result));
} finally {
  await postgres?.stop();
}
