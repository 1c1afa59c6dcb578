import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import {
  findTransfers,
  OWN_EVENTS_READ_MAX,
  readAccountTx,
  type AccountTxKey,
} from '../../src/store/read/account-txs.js';
import { startTestApi } from '../support/api.js';
import { stopOwnCluster } from '../support/database.js';

after(stopOwnCluster);

// The principal's transfers in one tx (with_transfers) are read from the tx's own events (a primary-key range)
// when it has few, from the principal's events at the tx's height otherwise (store/read/account-txs.ts): both
// must give the same rows in the same order, for every canonical tx of every principal of recorded chains.

type Row = AccountTxKey & { principal: string; event_count: number };

describe('transfers of one tx: own events and events at its height agree', () => {
  // the generated chain has FT and NFT transfers, busy principals and txs of many events; the recorded one
  // reorgs and microblocks
  for (const [fixture, minTransfers] of [
    ['generated/gen-small', 2000],
    ['mainnet-reorg-scenario1', 50],
  ] as const) {
    test(fixture, async () => {
      const { store, close } = await startTestApi({ engine: 'postgres', fixture });
      try {
        const rows = await store.sql<Row[]>`
          SELECT p.principal, p.tx_id, p.index_block_hash, p.microblock_hash, p.block_height,
            p.microblock_sequence, p.tx_index, p.canonical, p.microblock_canonical, t.event_count
          FROM principal_txs p
          JOIN txs t ON t.tx_id = p.tx_id AND t.index_block_hash = p.index_block_hash
            AND t.microblock_hash = p.microblock_hash
          WHERE p.canonical AND p.microblock_canonical
          ORDER BY p.principal, p.block_height, p.tx_index
          LIMIT 3000`;
        assert.ok(rows.length > 100, `${rows.length} principal index rows`);
        let transfers = 0;
        let ownEventReads = 0;
        const kinds = new Set<number>();
        for (const { principal, event_count: eventCount, ...key } of rows) {
          const byHeight = await findTransfers(store.sql, principal, [key]);
          const read = await readAccountTx(store.sql, principal, key.tx_id);
          assert.deepEqual(read?.key, key, `${principal} in ${key.tx_id}: the canonical row`);
          assert.equal(read?.tx?.tx_id, key.tx_id);
          assert.deepEqual([...(read?.transfers ?? [])], [...byHeight], `${principal} in ${key.tx_id}`);
          if (eventCount <= OWN_EVENTS_READ_MAX) ownEventReads += 1;
          transfers += byHeight.length;
          for (const t of byHeight) kinds.add(t.kind);
        }
        assert.ok(transfers > minTransfers, `${transfers} transfers compared`);
        assert.ok(ownEventReads > rows.length / 2, `${ownEventReads} of ${rows.length} read from own events`);
        if (fixture.startsWith('generated/')) assert.deepEqual([...kinds].sort(), [1, 2, 3], 'STX, FT, NFT');
      } finally {
        await close();
      }
    });
  }
});
