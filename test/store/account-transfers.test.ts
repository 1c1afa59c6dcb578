import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { findTransfers, findTransfersOfTx, type AccountTxKey } from '../../src/store/read/account-txs.js';
import { startTestApi } from '../support/api.js';
import { stopOwnCluster } from '../support/database.js';

after(stopOwnCluster);

// The principal's transfers in one tx are read from the tx's own events (a primary-key range) when it has
// few, from the principal's events at the tx's height otherwise (store/read/account-txs.ts): both must give
// the same rows in the same order, for every tx of every principal of recorded chains.

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
        // every principal index row (orphaned and non-canonical-microblock ones too: both reads are by key)
        const rows = await store.sql<Row[]>`
          SELECT p.principal, p.tx_id, p.index_block_hash, p.microblock_hash, p.block_height,
            p.microblock_sequence, p.tx_index, p.canonical, p.microblock_canonical, t.event_count
          FROM principal_txs p
          JOIN txs t ON t.tx_id = p.tx_id AND t.index_block_hash = p.index_block_hash
            AND t.microblock_hash = p.microblock_hash
          ORDER BY p.principal, p.block_height, p.tx_index
          LIMIT 3000`;
        assert.ok(rows.length > 150, `${rows.length} principal index rows`);
        let transfers = 0;
        let kinds = new Set<number>();
        for (const { principal, event_count: eventCount, ...key } of rows) {
          const byHeight = await findTransfers(store.sql, principal, [key]);
          // 0: forced onto the own-events read whatever the tx's size
          const byOwnEvents = await findTransfersOfTx(store.sql, principal, key, 0);
          assert.deepEqual(byOwnEvents, byHeight, `${principal} in ${key.tx_id}`);
          assert.deepEqual(await findTransfersOfTx(store.sql, principal, key, eventCount), byHeight);
          transfers += byHeight.length;
          for (const t of byHeight) kinds = kinds.add(t.kind);
        }
        assert.ok(transfers > minTransfers, `${transfers} transfers compared`);
        if (fixture.startsWith('generated/')) assert.deepEqual([...kinds].sort(), [1, 2, 3], 'STX, FT, NFT');
      } finally {
        await close();
      }
    });
  }
});
