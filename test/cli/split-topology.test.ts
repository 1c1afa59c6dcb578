import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { readTsv, type RecordedMessage } from '../../src/protocol/tsv.js';
import { openDatabase, type Database } from '../../src/store/db.js';
import { listMigrations } from '../../src/store/migrate.js';
import { freePort, startPostgres, startReplica, type TestPostgres } from '../support/postgres.js';
import { startServe, type ServeProcess } from '../support/serve-process.js';
import { fixtureFile } from '../support/shared.js';
import { poll } from '../support/poll.js';

// Split topology with real processes: `serve --write-only` on the PostgreSQL primary, `serve --read-only`
// on a streaming replica. A replica does not replay NOTIFY, so the reader learns of a new tip from its own
// reads or when its cached chain state expires (a second): where it has read a newer tip than the one it
// keeps (here: the latest block itself), it must neither tag that answer with the old tip's ETag nor answer
// 304 to the old ETag. Before, both happened until the cached state expired.

let primary: TestPostgres | undefined;
let replica: TestPostgres | undefined;
let writer: ServeProcess | undefined;
let reader: ServeProcess | undefined;
let replicaDb: Database | undefined;

before(async () => {
  primary = await startPostgres({ replication: true });
  replica = await startReplica(primary);
});

after(async () => {
  await reader?.kill('SIGKILL');
  await writer?.kill('SIGKILL');
  await replicaDb?.close();
  await replica?.stop();
  await primary?.stop();
});

async function latest(api: string, ifNoneMatch?: string) {
  const res = await fetch(`${api}/extended/v2/blocks/latest`, {
    headers: ifNoneMatch ? { 'if-none-match': ifNoneMatch } : {},
  });
  const text = await res.text();
  const body = text ? (JSON.parse(text) as { height: number; index_block_hash: string }) : undefined;
  return { status: res.status, etag: res.headers.get('etag'), body };
}

describe('split topology: a reader on a replica beside the writer', () => {
  test('a reader that has read a newer tip neither tags it with the old ETag nor answers 304 to that', async () => {
    const primaryUrl = await primary!.createDatabase('split');
    const replicaUrl = primaryUrl.replace(`:${primary!.port}/`, `:${replica!.port}/`);
    const observerPort = await freePort();
    writer = await startServe({
      databaseUrl: primaryUrl,
      apiPort: await freePort(),
      observerPort,
      mode: 'write-only',
    });
    replicaDb = await openDatabase({ url: replicaUrl, pgliteDir: '', poolMax: 1 });
    const db = replicaDb;
    const migrations = (await listMigrations()).length;
    await poll('the schema on the replica', async () => {
      const [row] = await db.sql`SELECT count(*)::int AS n FROM schema_migrations`;
      return row.n === migrations ? true : undefined;
    });
    const apiPort = await freePort();
    reader = await startServe({
      databaseUrl: primaryUrl,
      apiPort,
      observerPort: await freePort(),
      mode: 'read-only',
      env: { DATABASE_REPLICA_URLS: replicaUrl },
    });
    const api = `http://127.0.0.1:${apiPort}`;

    // the mocknet chain, cut after each block
    const pending: RecordedMessage[] = [];
    const blocks: RecordedMessage[][] = [];
    for await (const message of readTsv(fixtureFile('mocknet'))) {
      pending.push(message);
      if (message.path === '/new_block') blocks.push(pending.splice(0));
    }
    const apply = async (messages: RecordedMessage[]) => {
      for (const m of messages) {
        const res = await fetch(`http://127.0.0.1:${observerPort}${m.path}`, {
          method: 'POST',
          body: m.payload,
        });
        assert.equal(res.status, 200, `${m.path} ${m.id}`);
      }
    };
    const replicated = (height: number) =>
      poll(`block ${height} on the replica`, async () => {
        const [tip] = await db.sql`SELECT block_height FROM chain_tip`;
        return tip.block_height === height ? true : undefined;
      });

    for (const messages of blocks.slice(0, 5)) await apply(messages);
    await replicated(5);
    let previous = await poll('block 5 on the reader', async () => {
      const answer = await latest(api);
      return answer.body?.height === 5 ? answer : undefined;
    });

    for (let height = 6; height <= 12; height++) {
      await apply(blocks[height - 1]);
      await replicated(height);
      // a client without a cached copy reads the new tip: its ETag names the block it got
      const fresh = await latest(api);
      assert.equal(fresh.status, 200);
      assert.equal(fresh.body?.height, height);
      assert.equal(fresh.etag, `"${fresh.body?.index_block_hash}:latest"`, `block ${height}`);
      // the reader has seen the new tip: the previous tip's ETag is outdated, not "not modified"
      const revalidated = await latest(api, previous.etag!);
      assert.equal(revalidated.status, 200, `block ${height}: 304 to the ETag of block ${height - 1}`);
      assert.equal(revalidated.body?.height, height);
      assert.equal((await latest(api, fresh.etag!)).status, 304);
      previous = fresh;
    }
  });
});
