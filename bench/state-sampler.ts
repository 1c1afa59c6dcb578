// Samples what one PostgreSQL backend is doing (pg_stat_activity), from a process of its own so the sampled
// indexer's CPU and event loop are not touched: on CPU, waiting (on what), idle between transactions, or
// idle inside one (waiting for its client), the last with the statement it last ran. Started by
// bench/ingest.ts (`--sample-states`); it samples until its stdin closes, then writes its tallies as JSON.
//
//   npx tsx bench/state-sampler.ts <database url> <backend pid>
import postgres from 'postgres';

export interface StateSamples {
  samples: number;
  /** `state` or `state: wait_event_type/wait_event`, with its sample count */
  states: Record<string, number>;
  /** idle in transaction, by the statement run last (its first 60 characters) */
  idleInTransactionAfter: Record<string, number>;
}

async function sample(url: string, pid: number): Promise<StateSamples> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  const result: StateSamples = { samples: 0, states: {}, idleInTransactionAfter: {} };
  let running = true;
  process.stdin.on('close', () => (running = false));
  process.stdin.on('end', () => (running = false));
  process.stdin.resume();
  const count = (into: Record<string, number>, key: string) => (into[key] = (into[key] ?? 0) + 1);
  while (running) {
    const [row] = await sql<{ state: string | null; wait: string | null; query: string }[]>`
      SELECT state, wait_event_type || '/' || wait_event AS wait,
        left(regexp_replace(query, '[[:space:]]+', ' ', 'g'), 60) AS query
      FROM pg_stat_activity WHERE pid = ${pid}`;
    if (row) {
      result.samples++;
      count(result.states, row.wait && row.state === 'active' ? `active: ${row.wait}` : (row.state ?? '?'));
      if (row.state === 'idle in transaction') count(result.idleInTransactionAfter, row.query);
    }
    // ~one sample every 2 ms: enough samples per block, little CPU taken from the two measured processes
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  await sql.end();
  return result;
}

const [url, pid] = process.argv.slice(2);
process.stdout.write(JSON.stringify(await sample(url, Number(pid))));
