import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { connectWebSocketClient, StacksApiSocketClient } from '@stacks/blockchain-api-client';
import type { WebSocket } from 'ws';
import { openDatabase, type Database } from '../../src/store/db.js';
import { listMigrations } from '../../src/store/migrate.js';
import { addressOf, ev, observerPoster, TestChain, transferTx } from '../support/chain.js';
import { freePort, startPostgres, startReplica, type TestPostgres } from '../support/postgres.js';
import { startServe, type ServeProcess } from '../support/serve-process.js';
import { Received } from './support.js';
import { poll } from '../support/poll.js';

// Live push in a split deployment, with real processes: `serve --write-only` ingests on the PostgreSQL
// primary; one `serve --read-only` reads the primary (it hears the writer's NOTIFY), another reads a
// streaming replica (no NOTIFY there: it looks at the chain state). A client of each reader, with the
// official client, gets every event the writer's commits make true, each what that reader's endpoint answers.

let primary: TestPostgres | undefined;
let replica: TestPostgres | undefined;
const processes: ServeProcess[] = [];
let replicaDb: Database | undefined;

before(async () => {
  primary = await startPostgres({ replication: true });
  replica = await startReplica(primary);
});

after(async () => {
  for (const p of processes) await p.kill('SIGKILL');
  await replicaDb?.close();
  await replica?.stop();
  await primary?.stop();
});

describe('live push in a split deployment', () => {
  test('readers on the primary and on a replica push what the writer ingested', async () => {
    const primaryUrl = await primary!.createDatabase('push');
    const replicaUrl = primaryUrl.replace(`:${primary!.port}/`, `:${replica!.port}/`);
    const observerPort = await freePort();
    processes.push(
      await startServe({
        databaseUrl: primaryUrl,
        apiPort: await freePort(),
        observerPort,
        mode: 'write-only',
      }),
    );
    replicaDb = await openDatabase({ url: replicaUrl, pgliteDir: '', poolMax: 1 });
    const db = replicaDb;
    const migrations = (await listMigrations()).length;
    await poll('the schema on the replica', async () => {
      const [row] = await db.sql`SELECT count(*)::int AS n FROM schema_migrations`;
      return row.n === migrations ? true : undefined;
    });
    const [onPrimary, onReplica] = await Promise.all(
      ([{}, { DATABASE_REPLICA_URLS: replicaUrl }] as Record<string, string>[]).map(async (env) => {
        const apiPort = await freePort();
        const reader = await startServe({
          databaseUrl: primaryUrl,
          apiPort,
          observerPort: await freePort(),
          mode: 'read-only',
          env,
        });
        processes.push(reader);
        return `http://127.0.0.1:${apiPort}`;
      }),
    );

    // the test chain, posted to the writer's observer as a node would
    const chain = new TestChain(observerPoster(`http://127.0.0.1:${observerPort}`));
    const alice = addressOf('alice');
    const bob = addressOf('bob');
    await chain.block({ txs: [] });
    const base = await chain.block({ txs: [] });
    const first = await transferTx({ from: 'alice', to: bob, amount: 100, fee: 300, nonce: 0 });

    // a WebSocket client of the reader on the primary, a socket.io client of the one on the replica
    const ws = await connectWebSocketClient(onPrimary.replace('http', 'ws'));
    const io = new StacksApiSocketClient({ url: onReplica, socketOpts: { reconnection: false } });
    after(() => {
      (ws.webSocket as WebSocket).close();
      io.socket.disconnect();
    });
    const wsTx = new Received<unknown>();
    const wsAddress = new Received<unknown>();
    const ioTx = new Received<unknown>();
    const ioMempool = new Received<unknown>();
    await ws.subscribeTxUpdates(first.txid, wsTx.push);
    await ws.subscribeAddressTransactions(alice, wsAddress.push);
    io.socket.on('mempool', ioMempool.push);
    io.socket.on(`transaction:${first.txid}` as never, ioTx.push);
    for (const topic of ['mempool', `transaction:${first.txid}`]) {
      const refused = await new Promise<string | null>((resolve) =>
        io.socket.emit('subscribe', topic as never, (error: string | null) => resolve(error)),
      );
      assert.equal(refused, null, topic);
    }

    /** The tx as a reader's endpoint answers it now. */
    const txAt = async (api: string) => {
      const res = await fetch(`${api}/extended/v1/tx/${first.txid}?unanchored=true`);
      assert.equal(res.status, 200);
      return (await res.json()) as { tx_status: string; is_unanchored?: boolean; block_height?: number };
    };
    /** The n-th tx update of each reader: what its endpoint answers, with the status given. */
    const updates = async (n: number, status: string) => {
      const [fromPrimary, fromReplica] = await Promise.all([
        wsTx.atLeast(n, 30_000),
        ioTx.atLeast(n, 30_000),
      ]);
      const [nowPrimary, nowReplica] = await Promise.all([txAt(onPrimary), txAt(onReplica)]);
      assert.deepEqual(fromPrimary[n - 1], nowPrimary, `update ${n} on the primary's reader`);
      assert.deepEqual(fromReplica[n - 1], nowReplica, `update ${n} on the replica's reader`);
      assert.equal(nowPrimary.tx_status, status);
      return nowPrimary;
    };

    // 1. in the mempool
    await chain.mempool([first]);
    const pending = await updates(1, 'pending');
    assert.deepEqual(await ioMempool.atLeast(1, 30_000), [pending]);

    // 2. mined in a block: the address's tx on the primary's reader too
    const mined = await chain.block({ txs: [{ tx: first, events: [ev.stxTransfer(alice, bob, 100)] }] });
    const success = await updates(2, 'success');
    assert.equal(success.block_height, mined.height);
    const [addressTx] = (await wsAddress.atLeast(1, 30_000)) as { tx_id: string; tx_status: string }[];
    assert.equal(addressTx.tx_id, first.txid);
    assert.equal(addressTx.tx_status, 'success');

    // 3. a fork switch orphans that block: pending again, and back in the mempool
    const sibling = await chain.block({ parent: base, txs: [] });
    await chain.block({ parent: sibling, txs: [] });
    const orphaned = await updates(3, 'pending');
    assert.deepEqual((await ioMempool.atLeast(2, 30_000))[1], orphaned);

    // 4. mined again, in a microblock on the new tip
    await chain.microblock({ txs: [{ tx: first, events: [ev.stxTransfer(alice, bob, 100)] }] });
    const streamed = await updates(4, 'success');
    assert.equal(streamed.is_unanchored, true);
    assert.equal(wsTx.items.length, 4, 'no event twice');
    assert.equal(ioTx.items.length, 4, 'no event twice');
  });
});
