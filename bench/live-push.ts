// Live push alone (bench/push.ts), on a throwaway PostgreSQL:
//   npx tsx bench/live-push.ts [--idle 10000] [--subscribers 1000] [--events 20]
import { parseArgs } from 'node:util';
import { startPostgres } from '../test/support/postgres.js';
import { measurePush } from './push.js';

const { values } = parseArgs({
  options: {
    idle: { type: 'string', default: '10000' },
    subscribers: { type: 'string', default: '1000' },
    events: { type: 'string', default: '20' },
  },
});
const cluster = await startPostgres();
try {
  const result = await measurePush({
    databaseUrl: await cluster.createDatabase('bench_push'),
    idle: Number(values.idle),
    subscribers: Number(values.subscribers),
    events: Number(values.events),
  });
  console.log(JSON.stringify(result, null, 2));
} finally {
  await cluster.stop();
}
