import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { Ingestor } from '../../src/ingest/ingestor.js';
import { openTestStore, silentLogger, stopOwnCluster } from '../support/database.js';
import { testEngines } from '../support/engines.js';
import { burnchainOpTxBlocks } from '../support/shared.js';

after(stopOwnCluster);

// Real mainnet blocks holding burnchain-op txs (raw_tx 0x00), ingested through the observer path.

interface BurnchainOpRow {
  tx_id: string;
  type_id: number;
  status: number;
  nonce: number;
  fee_rate: string;
  sender_address: string;
  sponsored: boolean;
  anchor_mode: number;
  post_condition_mode: number;
  token_transfer_recipient: string | null;
  token_transfer_amount: string | null;
  contract_call_contract_id: string | null;
  payload: Record<string, { function_name?: string; memo?: string }>;
}

for (const engine of testEngines(import.meta.url)) {
  describe(`burnchain-op txs (${engine})`, () => {
    test('every block of burnchain-op txs ingests to the txs upstream reconstructs', async () => {
      const store = await openTestStore(engine);
      try {
        const ingestor = new Ingestor(store, { isMainnet: true, logger: silentLogger });
        const files = burnchainOpTxBlocks().sort(
          (a, b) => JSON.parse(a.body).block_height - JSON.parse(b.body).block_height,
        );
        assert.equal(files.length, 7);
        // Blocks from far apart on mainnet: each is made the child of the one before (one higher), since a
        // block whose parent was never received, or that does not follow its parent, is refused once the
        // index holds a chain. A file holding only some txs of its block (stx_lock-1994: tx 40 alone) has
        // them numbered 0..n-1 as a whole block's are.
        type FixtureBlock = {
          index_block_hash: string;
          block_hash: string;
          block_height: number;
          transactions: { tx_index: number }[];
        };
        let parent: FixtureBlock | undefined;
        for (const { body } of files) {
          const block = JSON.parse(body) as FixtureBlock;
          if (parent) {
            Object.assign(block, {
              parent_index_block_hash: parent.index_block_hash,
              parent_block_hash: parent.block_hash,
              block_height: parent.block_height + 1,
            });
          }
          block.transactions.forEach((tx, i) => (tx.tx_index = i));
          parent = block;
          assert.equal(await ingestor.take('/new_block', JSON.stringify(block)), 'applied');
        }

        const rows = await store.sql<BurnchainOpRow[]>`
          SELECT tx_id, type_id, status, nonce, fee_rate, sender_address, sponsored, anchor_mode, post_condition_mode,
            token_transfer_recipient, token_transfer_amount, contract_call_contract_id, payload
          FROM txs WHERE raw_tx = '0x00' ORDER BY block_height, tx_index`;
        const byId = new Map(rows.map((r) => [r.tx_id, r]));

        for (const row of rows) {
          assert.equal(row.nonce, 0);
          assert.equal(row.fee_rate, '0');
          assert.equal(row.sponsored, false);
          assert.equal(row.anchor_mode, 3, 'anchor mode any');
          assert.equal(row.post_condition_mode, 1, 'post-condition mode allow');
        }

        const transfer = byId.get('0xc0263c14f689ae757290f90765a28314497f52bd22b8bcbf87a12c764dd9d9be');
        assert.ok(transfer);
        assert.equal(transfer.type_id, 0);
        assert.equal(transfer.sender_address, 'SMQ5V9ZVGN62G1X3VJNM2MF64SG6JXS8SKVNTGZQ');
        assert.equal(transfer.token_transfer_recipient, 'SP2ZP4GJDZJ1FDHTQ963F0292PE9J9752TZJ68F21');
        assert.equal(transfer.token_transfer_amount, '2000');
        assert.equal(transfer.payload.token_transfer.memo, '0x');

        const lock = byId.get('0xb182e2aacfe2ed4257d66dd2ed4872f672cf10d873852b5218f41594d6b42b11');
        assert.ok(lock);
        assert.equal(lock.type_id, 2);
        assert.equal(lock.sender_address, 'SM3KJBA4RZ7Z20KD2HBXNSXVPCR1D3CRAV6Q05MKT');
        assert.equal(lock.contract_call_contract_id, 'SP000000000000000000002Q6VF78.pox');
        assert.equal(lock.payload.contract_call.function_name, 'stack-stx');

        // Failed burnchain ops carry no events: upstream skips them, so do we.
        for (const failed of [
          '0x2d825fbeb5368dcaeecdce053860e7d900bc66701751037f8b92dd7f8fd2a1b0',
          '0x763e485177d772efdb1baede3276d5091a96e90fbb156d25427c1a2e7ea1d6fd',
        ]) {
          assert.equal(byId.has(failed), false);
        }
        const kinds = rows.map((r) => r.type_id).sort();
        assert.deepEqual(kinds, [0, 0, 0, 2, 2]);
      } finally {
        await store.close();
      }
    });
  });
}
