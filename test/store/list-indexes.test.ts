import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { RecordedMessage } from '../../src/protocol/tsv.js';
import type { Engine, Sql } from '../../src/store/db.js';
import { migrate } from '../../src/store/migrate.js';
import type { Store } from '../../src/store/store.js';
import { Ingestor } from '../../src/ingest/ingestor.js';
import { openTestStore, silentLogger, stopOwnCluster } from '../support/database.js';
import { generatedMessages } from '../support/delivery.js';
import { databaseDigest, READ_TABLES, RECEIPT_TIME_COLUMNS } from '../support/digest.js';
import { GENERATED_CASE, runsOn, testEngines } from '../support/engines.js';
import { fixtureIsMainnet, fixtureMessages } from '../support/shared.js';

// Migrations 033-038 add what the lists beyond the ten read: each block's chain totals, the sponsor rows,
// the NFT custody, and their indexes. Ingest keeps the first three through reorgs; each migration fills them
// from what the index holds, by their definition (the canonical chain's rows). A chain indexed half-way, its
// new tables dropped and migrated again, must hold what a database indexed all along holds, there and after
// the rest of the chain (forks and reorgs on either side of the cut); and a database indexed all along must
// hold what the migrations fill from its chain. That proves the migrations' backfill and ingest's upkeep
// (from the rows in hand, through reorgs, after a backfill) equal to the definition.

after(stopOwnCluster);

interface Chain {
  name: string;
  mainnet: boolean;
  messages: RecordedMessage[];
  /** where the chain is cut: the migration runs after this many messages */
  cut: number;
}

const chains: Chain[] = [];

before(async () => {
  // forks at 30% and 60% of the chain: one reorg each side of the cut; sponsored txs, NFT mints, transfers
  // and burns, microblocks
  const generated = await generatedMessages({
    blocks: 64,
    accounts: 16,
    seed: 'block-paths',
    txsPerBlock: 12,
    workers: 0,
  });
  chains.push({
    name: GENERATED_CASE,
    mainnet: true,
    messages: generated.messages,
    cut: Math.round(generated.messages.length * 0.45),
  });
  // a chain starting at block 1 mined in a burn block above its child's, and reorgs; a genesis block 0
  for (const name of ['mainnet-reorg-scenario1', 'mainnet-block0']) {
    const messages = fixtureMessages(name);
    chains.push({ name, mainnet: fixtureIsMainnet(name), messages, cut: Math.round(messages.length / 2) });
  }
});

/**
 * Back to the schema before migration 033: its tables and indexes and those of 034-038 gone (037 and 038
 * replace indexes of 035 and 001: those of 001 come back).
 */
async function forgetListIndexes(sql: Sql): Promise<void> {
  await sql`DROP TABLE chain_totals, sponsor_txs, nft_custody`;
  await sql`DROP INDEX events_nft_key_idx, blocks_burn_block_hash_idx, txs_type_chain_idx,
    txs_sponsor_sponsor_nonce_idx, mempool_pending_receipt_idx, mempool_pending_fee_idx, mempool_pending_size_idx,
    mempool_pending_contract_call_idx, mempool_sender_pending_nonce_idx, mempool_sponsor_pending_nonce_idx`;
  await sql`CREATE INDEX mempool_sender_nonce_idx ON mempool_txs (sender_address, nonce) WHERE NOT pruned`;
  await sql`CREATE INDEX mempool_sponsor_nonce_idx ON mempool_txs (sponsor_address, sponsor_nonce)
    WHERE NOT pruned AND sponsored`;
  await sql`DELETE FROM schema_migrations WHERE version BETWEEN 33 AND 38`;
}

const NEW_TABLES = ['chain_totals', 'sponsor_txs', 'nft_custody'];

const indexesOf = (sql: Sql) =>
  sql<{ indexname: string; indexdef: string }[]>`
    SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY indexname`;

/** The index's tables (the time each database was created, which chain_tip keeps until a block, left out). */
const digest = (sql: Sql) => databaseDigest(sql, READ_TABLES, RECEIPT_TIME_COLUMNS);

async function apply(store: Store, chain: Chain, messages: RecordedMessage[]) {
  const ingestor = new Ingestor(store, { isMainnet: chain.mainnet, logger: silentLogger });
  for (const m of messages) await ingestor.take(m.path, m.payload, m.receivedAt);
}

/** What the chain put in the new tables, so the comparison is known to cover each of them. */
async function coverage(sql: Sql) {
  const [row] = await sql<Record<string, number>[]>`
    SELECT
      (SELECT count(*)::int FROM blocks WHERE NOT canonical) AS orphaned_blocks,
      (SELECT count(*)::int FROM chain_totals) AS chain_totals,
      (SELECT count(*)::int FROM sponsor_txs) AS sponsor_txs,
      (SELECT count(*)::int FROM nft_custody) AS nft_custody`;
  return row;
}

for (const engine of testEngines(import.meta.url) as Engine[]) {
  describe(`migrations 033-038 and ingest's upkeep of their tables (${engine})`, () => {
    test('a chain migrated half-way holds what one indexed all along holds, there and at its end', async (t) => {
      const covered: Record<string, Record<string, number>> = {};
      for (const chain of chains) {
        if (!runsOn(engine, import.meta.url, chain.name)) continue;
        const fresh = await openTestStore(engine);
        const migrated = await openTestStore(engine);
        try {
          const [before, rest] = [chain.messages.slice(0, chain.cut), chain.messages.slice(chain.cut)];
          await apply(fresh, chain, before);
          await apply(migrated, chain, before);
          const atCut = await digest(fresh.sql);
          await forgetListIndexes(migrated.sql);
          assert.deepEqual(await migrate(migrated.sql), [
            '033_chain_totals',
            '034_sponsor_txs',
            '035_nft_custody',
            '036_list_indexes',
            '037_nft_custody_page',
            '038_mempool_payer_pending',
          ]);
          assert.deepEqual(await indexesOf(migrated.sql), await indexesOf(fresh.sql), chain.name);
          const migratedAtCut = await digest(migrated.sql);
          for (const table of READ_TABLES) {
            assert.equal(migratedAtCut[table], atCut[table], `${chain.name}, at the cut: ${table}`);
          }
          await apply(fresh, chain, rest);
          await apply(migrated, chain, rest);
          const atEnd = await digest(fresh.sql);
          const migratedAtEnd = await digest(migrated.sql);
          for (const table of READ_TABLES) {
            assert.equal(migratedAtEnd[table], atEnd[table], `${chain.name}, at the end: ${table}`);
          }
          // and the tables kept through the whole chain are what the migrations fill from it
          covered[chain.name] = await coverage(fresh.sql);
          await forgetListIndexes(fresh.sql);
          await migrate(fresh.sql);
          const refilled = await digest(fresh.sql);
          for (const table of READ_TABLES) {
            assert.equal(atEnd[table], refilled[table], `${chain.name}, filled again at the end: ${table}`);
          }
        } finally {
          await fresh.close();
          await migrated.close();
        }
      }
      t.diagnostic(JSON.stringify(covered));
      for (const table of NEW_TABLES) {
        assert.ok(
          Object.values(covered).some((c) => c[table] > 0),
          `rows in ${table}: ${JSON.stringify(covered)}`,
        );
      }
    });
  });
}
