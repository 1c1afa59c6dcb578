import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { Ingestor } from '../../src/ingest/ingestor.js';
import { replayFile } from '../../src/ingest/replay.js';
import { openTestStore, silentLogger, stopOwnCluster } from '../support/database.js';
import { testEngines } from '../support/engines.js';
import { databaseDigest } from '../support/digest.js';
import { fixtureFile, fixtureIsMainnet, fixtureNames, loadGolden } from '../support/shared.js';

after(stopOwnCluster);

/** The tip the original API reported after importing the fixture. */
function goldenTip(fixture: string) {
  const latest = loadGolden(fixture).find((r) => r.path === '/extended/v2/blocks/latest');
  assert.ok(latest, `${fixture}: golden has /extended/v2/blocks/latest`);
  return latest.body as { height: number; hash: string; index_block_hash: string };
}

/** Ids of the txs the original API shows as mined on the canonical chain. */
function goldenMinedTxIds(fixture: string): Set<string> {
  const ids = new Set<string>();
  for (const r of loadGolden(fixture)) {
    const body = r.body as { tx_id?: string; canonical?: boolean; block_hash?: string } | null;
    if (
      r.status === 200 &&
      /^\/extended\/v1\/tx\/0x/.test(r.path) &&
      body?.canonical &&
      body.block_hash !== '0x'
    ) {
      ids.add(body.tx_id!);
    }
  }
  return ids;
}

const issueTips: Record<string, { height: number; hashPrefix?: string; txs?: number }> = {
  mocknet: { height: 28, hashPrefix: '0x7682af212d3c1ef6', txs: 35 },
  'mainnet-reorg-scenario1': { height: 47, hashPrefix: '0x10d0eb312bf0242a', txs: 95 },
  'mainnet-reorg-scenario2': { height: 4, hashPrefix: '0x5d0618b4b1f1d445' },
  'mainnet-block0': { height: 2 },
  'mainnet-out-of-order-microblock': { height: 1 },
  poisonmicroblock: { height: 1, hashPrefix: '0x6b83b44571365e6e', txs: 63 },
  'fuzzed-transactions-1': { height: 12 },
  'regtest-env-pox-4-stack-stx-in-reward-phase-S1': { height: 8, txs: 47 },
};

for (const engine of testEngines(import.meta.url)) {
  describe(`replay of the shared fixtures (${engine})`, () => {
    for (const fixture of fixtureNames()) {
      test(fixture, async () => {
        const store = await openTestStore(engine);
        try {
          const ingestor = new Ingestor(store, {
            isMainnet: fixtureIsMainnet(fixture),
            logger: silentLogger,
          });
          const first = await replayFile(ingestor, fixtureFile(fixture));
          assert.ok(first.messages > 0);

          const [tip] = await store.sql<
            { block_height: number; block_hash: string; index_block_hash: string }[]
          >`
            SELECT block_height, block_hash, index_block_hash FROM chain_tip`;
          const golden = goldenTip(fixture);
          const expected = issueTips[fixture];
          assert.equal(tip.block_height, expected.height);
          assert.equal(tip.block_height, golden.height);
          assert.equal(tip.block_hash, golden.hash);
          assert.equal(tip.index_block_hash, golden.index_block_hash);
          if (expected.hashPrefix) assert.ok(tip.block_hash.startsWith(expected.hashPrefix));

          const mined = await store.sql<{ tx_id: string }[]>`
            SELECT DISTINCT tx_id FROM txs WHERE canonical AND microblock_canonical AND index_block_hash <> ''`;
          const goldenIds = goldenMinedTxIds(fixture);
          assert.deepEqual(new Set(mined.map((r) => r.tx_id)), goldenIds);
          if (expected.txs !== undefined) assert.equal(mined.length, expected.txs);

          // Replaying the same stream again is a no-op, down to the raw message log, except for messages
          // that did not fit the first time (microblocks sent ahead of their block): they may now.
          const before = await databaseDigest(store.sql);
          const second = await replayFile(ingestor, fixtureFile(fixture));
          const newlyApplied = second.messages - second.duplicates - second.skipped;
          assert.ok(newlyApplied <= first.skipped);
          if (newlyApplied === 0) {
            assert.equal(second.duplicates, second.messages);
            assert.deepEqual(await databaseDigest(store.sql), before);
          } else {
            // The stream on block 1 arrived before block 1: on the second pass it is on the tip.
            assert.equal(fixture, 'mainnet-out-of-order-microblock');
            assert.equal(newlyApplied, 2);
            const [streamed] = await store.sql<{ n: number }[]>`
              SELECT count(*)::int AS n FROM microblocks
              WHERE microblock_hash IN (
                '0xb714e75a7dae26fee0e77788317a0c84e513d1d8647a376b21b1c864e55c135a',
                '0xab9112694f13f7b04996d4b4554af5b5890271fa4e0c9099e67353b42dcf9989')`;
            assert.equal(streamed.n, 2);
          }
        } finally {
          await store.close();
        }
      });
    }
  });

  describe(`reorg facts in the database (${engine})`, () => {
    const cases = [
      {
        fixture: 'mainnet-reorg-scenario1',
        txId: '0x03484817283a83a0b0c23e84c2659f39c9a06d81a63329464d979ec2af476596',
        blockHash: '0x4d27059a847f3c3f6dbbd43343d11981b67409a2710597c6cb1814945cfc4d48',
        height: 45,
        microblockHash: '0xa58e1ede6f244c92c51e8c5cb32be6c7dcf40e13c4ce4bfe87484f33422876e0',
      },
      {
        fixture: 'mainnet-reorg-scenario2',
        txId: '0x87916a01f0c31d246649eb2631a57b135cc94d26cd802f3b6a24723f2f21c74a',
        blockHash: '0x8f77bd15d37346543c64340e79b891b48628e36fcde9ae27d4e5e3f3992b5c8b',
        height: 2,
        microblockHash: '0x96896fb0a2a190593c7bc34ff5711c147ef024a034f38af57ca508e907815df7',
      },
    ];
    for (const c of cases) {
      test(`${c.fixture}: ${c.txId.slice(0, 10)}… is mined in the restored fork's microblock`, async () => {
        const store = await openTestStore(engine);
        try {
          await replayFile(
            new Ingestor(store, { isMainnet: true, logger: silentLogger }),
            fixtureFile(c.fixture),
          );
          const rows = await store.sql<
            {
              block_hash: string;
              block_height: number;
              microblock_hash: string;
              microblock_sequence: number;
              status: number;
              event_count: number;
              canonical: boolean;
              microblock_canonical: boolean;
            }[]
          >`
            SELECT block_hash, block_height, microblock_hash, microblock_sequence, status, event_count,
              canonical, microblock_canonical
            FROM txs WHERE tx_id = ${c.txId} AND canonical AND microblock_canonical`;
          assert.equal(rows.length, 1);
          assert.deepEqual(rows[0], {
            block_hash: c.blockHash,
            block_height: c.height,
            microblock_hash: c.microblockHash,
            microblock_sequence: 0,
            status: 1,
            event_count: 1,
            canonical: true,
            microblock_canonical: true,
          });
          const [events] = await store.sql<{ n: number }[]>`
            SELECT count(*)::int AS n FROM events WHERE tx_id = ${c.txId} AND canonical AND microblock_canonical`;
          assert.equal(events.n, 1);
          // The same tx also sits in an orphaned block, never shown.
          const [orphans] = await store.sql<{ n: number }[]>`
            SELECT count(*)::int AS n FROM txs WHERE tx_id = ${c.txId} AND NOT canonical`;
          assert.ok(orphans.n >= 1);
        } finally {
          await store.close();
        }
      });
    }
  });
}
