import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { generateFile } from '../../src/cli/generate.js';
import type { GenerateReport } from '../../src/devnet/chain.js';
import { Ingestor } from '../../src/ingest/ingestor.js';
import { readTsv, type RecordedMessage } from '../../src/protocol/tsv.js';
import type { Engine, Sql } from '../../src/store/db.js';
import { MempoolStatus } from '../../src/store/schema/codes.js';
import { startTestApi } from '../support/api.js';
import { addressOf, ev, transferWithEvent } from '../support/chain.js';
import { databaseDigest, READ_TABLES } from '../support/digest.js';
import { openTestStore, silentLogger, stopOwnCluster } from '../support/database.js';
import { testEngines } from '../support/engines.js';

// A new canonical block's consequences are computed from the rows in hand (principal ordinals numbered on
// insert, balance contributions from the decoded rows, the mempool pruned by the block's tx keys), while a
// reorg, a genesis adoption or a block confirming past orphaned microblocks computes them from the rows read
// back (assignOrdinals, applyStoredContributions, minedTxClaims). The ingest switch `readBackRows` sends
// every block down the read-back paths: a generated chain (forks, a microblock stream, sponsored txs,
// FT/NFT mints, transfers and burns, replace-by-fee and stale drops) goes through each into its own
// database, and the two indexes must be equal, table by table. (Checked to fail when a path is broken:
// the insert path numbering in another order fails on principal_txs, the in-hand pruning missing two txs a
// block fails on the mempool statuses.) The in-hand path also sends the statements' literals built before
// the transaction (`encodeChainRows`), the read-back path builds them from the rows when sent: the same
// index proves the two encodings equal, with one statement per insert and (rows cut 5 a statement) several.

const dir = mkdtempSync(join(tmpdir(), 'block-paths-'));
const chainFile = join(dir, 'chain.tsv');
// 64 blocks: the generator forks at 60% and, from 60 blocks, at 30% of the chain
const CHAIN = { blocks: 64, accounts: 16, seed: 'block-paths', txsPerBlock: 12, workers: 0 };
let report: GenerateReport;
const messages: RecordedMessage[] = [];

before(async () => {
  report = await generateFile(CHAIN, chainFile, false);
  for await (const m of readTsv(chainFile)) messages.push(m);
});

after(async () => {
  rmSync(dir, { recursive: true, force: true });
  await stopOwnCluster();
});

/** What the chain put in the index, so the comparison is known to cover each kind of row. */
async function coverage(sql: Sql) {
  const [row] = await sql<Record<string, number>[]>`
    SELECT
      (SELECT count(*)::int FROM blocks WHERE NOT canonical) AS orphaned_blocks,
      (SELECT count(*)::int FROM microblocks WHERE microblock_canonical) AS microblocks,
      (SELECT count(*)::int FROM txs WHERE canonical AND sponsored) AS sponsored_txs,
      (SELECT count(*)::int FROM principal_txs WHERE ordinal IS NOT NULL) AS numbered_principal_txs,
      (SELECT count(*)::int FROM principal_txs WHERE ordinal IS NULL) AS unnumbered_principal_txs,
      (SELECT count(*)::int FROM ft_balances) AS ft_balances,
      (SELECT count(*)::int FROM nft_balances) AS nft_balances,
      (SELECT count(*)::int FROM mempool_txs WHERE status = ${MempoolStatus.dropped_replace_by_fee})
        AS replaced_by_fee,
      (SELECT count(*)::int FROM mempool_txs WHERE NOT pruned) AS pending,
      (SELECT count(*)::int FROM chain_totals) AS chain_totals,
      (SELECT count(*)::int FROM sponsor_txs) AS sponsor_txs,
      (SELECT count(*)::int FROM nft_custody) AS nft_custody`;
  return row;
}

async function ingest(engine: Engine, readBackRows: boolean, rowsPerStatement?: number) {
  const store = await openTestStore(engine, { rowsPerStatement });
  try {
    const ingestor = new Ingestor(store, { isMainnet: true, logger: silentLogger, readBackRows });
    for (const m of messages) await ingestor.take(m.path, m.payload, m.receivedAt);
    // receipt times are the recorded ones (the same on both sides): every column is compared
    return { digest: await databaseDigest(store.sql, READ_TABLES), coverage: await coverage(store.sql) };
  } finally {
    await store.close();
  }
}

for (const engine of testEngines(import.meta.url)) {
  describe(`a new block's rows in hand and read back (${engine})`, () => {
    test('give the same index on a generated chain with forks, microblocks and mempool churn', async () => {
      assert.equal(report.reorgs, 2);
      assert.equal(report.microblocks, 7);
      const inHand = await ingest(engine, false);
      const readBack = await ingest(engine, true);
      // the rows cut into statements of 5: literals built ahead for several statements per insert
      const inHandCut = await ingest(engine, false, 5);
      assert.deepEqual(inHand.coverage, {
        orphaned_blocks: 2,
        microblocks: 7,
        sponsored_txs: 42,
        numbered_principal_txs: 1836,
        // the principal index rows of the two blocks off the canonical chain
        unnumbered_principal_txs: 31,
        ft_balances: 20,
        nft_balances: 16,
        replaced_by_fee: 33,
        pending: 2,
        // a block's chain totals for every block; sponsored txs whose sponsor takes no other part; NFTs held
        chain_totals: 66,
        sponsor_txs: 39,
        nft_custody: 62,
      });
      assert.deepEqual(readBack.coverage, inHand.coverage);
      for (const table of READ_TABLES) {
        assert.equal(readBack.digest[table], inHand.digest[table], table);
        assert.equal(inHandCut.digest[table], inHand.digest[table], `${table}, 5 rows a statement`);
      }
    });
  });

  describe(`a sponsored tx past a cut of the principal index rows (${engine})`, () => {
    // A block's principal index rows are inserted 4 a statement here, its 4 txs in one: what follows the
    // inserts is sent at once, and the later statements of an insert only as the earlier ones are answered.
    // (At the usual 250 rows a statement: a block of at most 250 txs and more than 250 principal rows.) The
    // sponsor rows are numbered from the rows in hand, and (`readBackRows`) from the rows stored.
    test("takes its place in the sponsor's v2 list, page by page", async () => {
      const [alice, bob, carol, dave, miner] = (['alice', 'bob', 'carol', 'dave', 'miner'] as const).map(
        addressOf,
      );
      const sponsor = addressOf('sponsor');
      const first = await transferWithEvent({ from: 'sponsor', fee: 10, nonce: 0, to: bob, amount: 1 });
      // 5 principal index rows (alice, bob, carol, dave, miner): the first statement and one more row
      const wide = await transferWithEvent({ from: 'alice', fee: 10, nonce: 0, to: bob, amount: 1 });
      wide.events!.push(ev.stxTransfer(carol, dave, 1), ev.stxTransfer(miner, carol, 1));
      const txs = [
        wide,
        // the sponsor's own two, in the second and third statements
        await transferWithEvent({ from: 'sponsor', fee: 10, nonce: 1, to: bob, amount: 1 }),
        await transferWithEvent({ from: 'bob', fee: 10, nonce: 0, to: sponsor, amount: 1 }),
        // one it only paid for
        await transferWithEvent({
          ...{ from: 'dave', fee: 10, nonce: 0, to: alice, amount: 1 },
          sponsor: { key: 'sponsor', nonce: 2 },
        }),
      ];
      // the chain's order, newest first
      const newestFirst = [txs[3], txs[2], txs[1], first].map((m) => m.tx.txid);
      for (const readBackRows of [false, true]) {
        const store = await openTestStore(engine, { rowsPerStatement: 4 });
        const { chain, app, close } = await startTestApi({ store, ingest: { readBackRows } });
        const ids = async (url: string) => {
          const res = await app.inject({ method: 'GET', url });
          assert.equal(res.statusCode, 200, url);
          const body = res.json<{ total: number; results: { tx: { tx_id: string } }[] }>();
          return { total: body.total, ids: body.results.map((r) => r.tx.tx_id) };
        };
        const v2 = (query: string) => ids(`/extended/v2/addresses/${sponsor}/transactions?${query}`);
        const path = readBackRows ? 'read back' : 'in hand';
        try {
          await chain.block({ txs: [first] });
          await chain.block({ txs });
          assert.deepEqual(await v2('limit=20'), { total: 4, ids: newestFirst }, path);
          // a page of one at each offset: each read by the index ranges its position gives
          for (const [offset, id] of newestFirst.entries()) {
            assert.deepEqual(
              await v2(`limit=1&offset=${offset}`),
              { total: 4, ids: [id] },
              `${path}, ${offset}`,
            );
          }
          // the v1 list (/extended/v1/address/{p}/transactions is not served) holds the sponsor's own txs only
          assert.deepEqual(
            await ids(`/extended/v1/address/${sponsor}/transactions_with_transfers?limit=1&offset=1`),
            { total: 3, ids: [txs[1].tx.txid] },
            path,
          );
        } finally {
          await close();
          await store.close();
        }
      }
    });
  });
}
