import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  PayloadType,
  TenureChangeCause,
  cvToString,
  deserializeTransaction,
  type NakamotoCoinbasePayloadWire,
  type TenureChangePayloadWire,
} from '@stacks/transactions';
import { generateFile } from '../../src/cli/generate.js';
import type { GenerateReport } from '../../src/devnet/chain.js';
import { Ingestor } from '../../src/ingest/ingestor.js';
import { replayFile, type ReplayStats } from '../../src/ingest/replay.js';
import { readTsv, type RecordedMessage } from '../../src/protocol/tsv.js';
import type { Store } from '../../src/store/store.js';
import { startTestApi } from '../support/api.js';
import { openTestStore, silentLogger, stopOwnCluster } from '../support/database.js';
import { testEngines } from '../support/engines.js';
import type { NewBlockMessage } from '../support/node-messages.js';

// A generated chain that enters Nakamoto, replayed through the ingestor: zero errors, and the index and the
// API show what the generator emitted (its report, and the messages themselves, read back from the file).

const dir = mkdtempSync(join(tmpdir(), 'nakamoto-chain-'));
const file = join(dir, 'chain.tsv');
const CHAIN = {
  blocks: 36,
  accounts: 16,
  seed: 'nakamoto-replay',
  txsPerBlock: 8,
  workers: 0,
  nakamotoHeight: 13,
};
let report: GenerateReport;
/** The canonical blocks as the generator posted them, by height. */
const posted = new Map<number, NewBlockMessage>();

before(async () => {
  report = await generateFile(CHAIN, file, false);
  const all: NewBlockMessage[] = [];
  for await (const m of readTsv(file)) if (m.path === '/new_block') all.push(JSON.parse(m.payload));
  // the canonical chain: back from the tip by parent hashes (the epoch 2.x part holds a fork)
  const byHash = new Map(all.map((b) => [b.index_block_hash, b]));
  for (let b = byHash.get(report.tipIndexBlockHash); b; b = byHash.get(b.parent_index_block_hash)) {
    posted.set(b.block_height, b);
  }
});

after(async () => {
  rmSync(dir, { recursive: true, force: true });
  await stopOwnCluster();
});

const iso = (t: number) => new Date(t * 1000).toISOString();

for (const engine of testEngines(import.meta.url)) {
  describe(`a generated Nakamoto-era chain (${engine})`, () => {
    // the chain replayed once, read by the first two tests
    let store: Store;
    let stats: ReplayStats;
    before(async () => {
      store = await openTestStore(engine);
      stats = await replayFile(new Ingestor(store, { isMainnet: true, logger: silentLogger }), file);
    });
    after(() => store.close());

    test('replays with zero errors, to the tip, tenure heights and tx counts by type of its report', async () => {
      assert.equal(stats.messages, report.messages);
      assert.equal(stats.duplicates, 0);
      assert.equal(stats.skipped, 0);

      const [tip] = await store.sql<{ block_height: number; index_block_hash: string }[]>`
        SELECT block_height, index_block_hash FROM chain_tip`;
      assert.deepEqual(tip, { block_height: report.tipHeight, index_block_hash: report.tipIndexBlockHash });
      const blocks = await store.sql<{ block_height: number; tenure_height: number; block_time: string }[]>`
        SELECT block_height, tenure_height, block_time FROM blocks WHERE canonical ORDER BY block_height`;
      assert.equal(blocks.length, report.tipHeight);
      for (const b of blocks) {
        const message = posted.get(b.block_height)!;
        assert.equal(b.tenure_height, message.tenure_height, `tenure height of block ${b.block_height}`);
        assert.equal(Number(b.block_time), message.block_time ?? message.burn_block_time);
      }
      assert.equal(blocks.at(-1)!.tenure_height, report.tipTenureHeight);
      assert.equal(report.tipTenureHeight, CHAIN.nakamotoHeight - 1 + report.tenures);

      // tx counts by type, as the API types them (a hundred ids a request)
      const { app } = await startTestApi({ store });
      const txTypes: Record<string, number> = {};
      try {
        const ids = (
          await store.sql<{ tx_id: string }[]>`
            SELECT DISTINCT tx_id FROM txs WHERE canonical AND microblock_canonical AND index_block_hash <> ''`
        ).map((r) => r.tx_id);
        for (let i = 0; i < ids.length; i += 100) {
          const query = ids
            .slice(i, i + 100)
            .map((id) => `tx_id=${id}`)
            .join('&');
          const res = await app.inject({ method: 'GET', url: `/extended/v1/tx/multiple?${query}` });
          for (const { result } of Object.values(
            res.json<Record<string, { result: { tx_type: string } }>>(),
          )) {
            txTypes[result.tx_type] = (txTypes[result.tx_type] ?? 0) + 1;
          }
        }
      } finally {
        await app.close();
      }
      assert.deepEqual(txTypes, report.txTypes);
      assert.equal(txTypes.tenure_change, report.tenures + report.tenureExtends);
      const [{ n: nakamotoCoinbases }] = await store.sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM txs WHERE canonical AND type_id = 8`;
      assert.equal(nakamotoCoinbases, report.tenures);
      const [{ n: pending }] = await store.sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM mempool_txs WHERE NOT pruned`;
      assert.equal(pending, report.mempoolPending);
    });

    test('the API serves its blocks, tenure changes and coinbases as the messages hold them', async () => {
      const { app } = await startTestApi({ store });
      const get = async <T>(url: string) => {
        const res = await app.inject({ method: 'GET', url });
        assert.equal(res.statusCode, 200, url);
        return res.json<T>();
      };
      try {
        const latest = await get<{ height: number; tenure_height: number }>('/extended/v2/blocks/latest');
        assert.equal(latest.height, report.tipHeight);
        assert.equal(latest.tenure_height, report.tipTenureHeight);

        const lastOfBurnBlock = new Map<number, NewBlockMessage>();
        let tenureChanges = 0;
        let coinbases = 0;
        let altRecipients = 0;
        for (let height = CHAIN.nakamotoHeight; height <= report.tipHeight; height++) {
          const m = posted.get(height)!;
          lastOfBurnBlock.set(m.burn_block_height, m);
          const block = await get<Record<string, unknown>>(`/extended/v2/blocks/${height}`);
          assert.deepEqual(
            {
              hash: block.hash,
              index_block_hash: block.index_block_hash,
              parent_index_block_hash: block.parent_index_block_hash,
              block_time: block.block_time,
              block_time_iso: block.block_time_iso,
              tenure_height: block.tenure_height,
              burn_block_height: block.burn_block_height,
              burn_block_time: block.burn_block_time,
              tx_count: block.tx_count,
            },
            {
              hash: m.block_hash,
              index_block_hash: m.index_block_hash,
              parent_index_block_hash: m.parent_index_block_hash,
              block_time: m.block_time,
              block_time_iso: iso(m.block_time!),
              tenure_height: m.tenure_height,
              burn_block_height: m.burn_block_height,
              burn_block_time: m.burn_block_time,
              tx_count: m.transactions.length,
            },
          );
          for (const t of m.transactions.slice(0, 2)) {
            const decoded = deserializeTransaction(t.raw_tx.slice(2));
            const tx = await get<Record<string, unknown>>(`/extended/v1/tx/${t.txid}`);
            if (decoded.payload.payloadType === PayloadType.TenureChange) {
              tenureChanges++;
              const p = decoded.payload as TenureChangePayloadWire;
              assert.equal(tx.tx_type, 'tenure_change');
              assert.deepEqual(tx.tenure_change_payload, {
                tenure_consensus_hash: '0x' + p.tenureHash,
                prev_tenure_consensus_hash: '0x' + p.previousTenureHash,
                burn_view_consensus_hash: '0x' + p.burnViewHash,
                previous_tenure_end: '0x' + p.previousTenureEnd,
                previous_tenure_blocks: p.previousTenureBlocks,
                cause: p.cause === TenureChangeCause.BlockFound ? 'block_found' : 'extended',
                pubkey_hash: '0x' + p.publicKeyHash,
              });
            } else if (decoded.payload.payloadType === PayloadType.NakamotoCoinbase) {
              coinbases++;
              const p = decoded.payload as NakamotoCoinbasePayloadWire;
              if (p.recipient) altRecipients++;
              assert.equal(tx.tx_type, 'coinbase');
              assert.deepEqual(tx.coinbase_payload, {
                data: '0x' + Buffer.from(p.coinbaseBytes).toString('hex'),
                alt_recipient: p.recipient ? cvToString(p.recipient) : null,
                vrf_proof: '0x' + Buffer.from(p.vrfProof).toString('hex'),
              });
            } else continue;
            assert.equal(tx.fee_rate, '0');
            assert.equal(tx.anchor_mode, 'on_chain_only');
            assert.equal(tx.tx_index, t.tx_index);
            assert.equal(tx.block_height, height);
            assert.equal(tx.block_time, m.block_time);
            assert.equal(tx.burn_block_time, m.burn_block_time);
          }
        }
        assert.equal(tenureChanges, report.tenures + report.tenureExtends);
        assert.equal(coinbases, report.tenures);
        assert.ok(altRecipients > 0 && altRecipients < coinbases, 'some coinbases pay another principal');

        // a burn block holds a tenure of several blocks: by_burn_block_height answers its last one
        for (const [burnHeight, m] of lastOfBurnBlock) {
          const block = await get<{ height: number; hash: string; txs: string[] }>(
            `/extended/v1/block/by_burn_block_height/${burnHeight}`,
          );
          assert.equal(block.height, m.block_height);
          assert.equal(block.hash, m.block_hash);
          assert.deepEqual(block.txs, m.transactions.map((t) => t.txid).reverse());
        }
        assert.ok(
          lastOfBurnBlock.size < report.tipHeight - CHAIN.nakamotoHeight + 1,
          'several blocks a burn block',
        );

        // miner rewards keep maturing in Nakamoto: each recipient is credited what the messages paid it
        const rewards = new Map<string, bigint>();
        for (const m of posted.values()) {
          for (const r of m.matured_miner_rewards) {
            const amount =
              BigInt(r.coinbase_amount) +
              BigInt(r.tx_fees_anchored) +
              BigInt(r.tx_fees_streamed_confirmed) +
              BigInt(r.tx_fees_streamed_produced);
            rewards.set(r.recipient, (rewards.get(r.recipient) ?? 0n) + amount);
          }
        }
        assert.ok(
          [...posted.values()].some((m) => m.signer_bitvec !== null && m.matured_miner_rewards.length > 0),
        );
        for (const [recipient, total] of rewards) {
          const balances = await get<{ stx: { total_miner_rewards_received: string } }>(
            `/extended/v1/address/${recipient}/balances`,
          );
          assert.equal(balances.stx.total_miner_rewards_received, total.toString(), recipient);
        }
      } finally {
        await app.close();
      }
    });

    test('mempool: a Nakamoto block collects txs pending over 2560 minutes, an epoch 2.x block does not', async () => {
      const store = await openTestStore(engine);
      const { app } = await startTestApi({ store });
      const ingestor = new Ingestor(store, { isMainnet: true, logger: silentLogger });
      // (a plain array: the driver's result class would not deep-equal one)
      const pending = async () => [
        ...(await store.sql<{ tx_id: string; receipt_time: string }[]>`
          SELECT tx_id, receipt_time FROM mempool_txs WHERE NOT pruned ORDER BY receipt_time, tx_id`),
      ];
      const status = async (txId: string) =>
        (await app.inject({ method: 'GET', url: `/extended/v1/tx/${txId}` })).json<{ tx_status: string }>()
          .tx_status;
      try {
        const messages: RecordedMessage[] = [];
        for await (const m of readTsv(file)) messages.push(m);
        const isBlock = (height: number) => (m: RecordedMessage) =>
          m.path === '/new_block' && (JSON.parse(m.payload) as NewBlockMessage).block_height === height;
        const lastEpoch2 = messages.findIndex(isBlock(CHAIN.nakamotoHeight - 1));
        const tip = messages.findIndex(isBlock(report.tipHeight));

        for (const m of messages.slice(0, lastEpoch2)) await ingestor.take(m.path, m.payload, m.receivedAt);
        const before2 = await pending();
        assert.ok(before2.length > 0, 'txs wait in the mempool');
        // three days later, an epoch 2.x block: collection counts blocks, so nothing goes
        const threeDays = new Date(messages[lastEpoch2].receivedAt.getTime() + 3 * 86_400_000);
        await ingestor.take(messages[lastEpoch2].path, messages[lastEpoch2].payload, threeDays);
        const after2 = await pending();
        const mined2 = new Set(
          (JSON.parse(messages[lastEpoch2].payload) as NewBlockMessage).transactions.map((t) => t.txid),
        );
        assert.deepEqual(
          after2,
          before2.filter((p) => !mined2.has(p.tx_id)),
        );

        for (const m of messages.slice(lastEpoch2 + 1, tip))
          await ingestor.take(m.path, m.payload, m.receivedAt);
        const waiting = await pending();
        assert.ok(waiting.length > 0, 'txs wait in the mempool');
        const mined = new Set(
          (JSON.parse(messages[tip].payload) as NewBlockMessage).transactions.map((t) => t.txid),
        );
        const oldest = Number(waiting[0].receipt_time);
        // the tip (a Nakamoto block) arrives when the oldest pending tx has waited 2560 minutes and a second
        const now = oldest + 2560 * 60 + 1;
        await ingestor.take(messages[tip].path, messages[tip].payload, new Date(now * 1000));
        const kept = new Set((await pending()).map((p) => p.tx_id));
        for (const p of waiting) {
          if (mined.has(p.tx_id)) continue;
          const stale = Number(p.receipt_time) < now - 2560 * 60;
          assert.equal(kept.has(p.tx_id), !stale, p.tx_id);
          assert.equal(await status(p.tx_id), stale ? 'dropped_stale_garbage_collect' : 'pending');
        }
        assert.ok(!kept.has(waiting[0].tx_id));
        assert.ok(kept.size > 0, 'younger txs stay');
      } finally {
        await app.close();
        await store.close();
      }
    });
  });
}
