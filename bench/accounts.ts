// Account reads at any history size: `npx tsx bench/accounts.ts [--txs 1000000] [--rounds 1000] [--seconds 5]`.
//
// On a throwaway PostgreSQL, builds a chain where one "hot" principal has --txs transactions (an STX
// transfer each, 100 per block) and a "small" principal has 10. Rows are written by the indexer's own write
// path (insertBlock, insertChainRows, addBlockContributions, setChainTipBlock: what ingest runs once a
// message is decoded), so running balances, the principal index and its ordinals are what ingest keeps.
// Then the read API is served on loopback; latency is timed request by request (all URLs interleaved, one
// keep-alive connection), throughput with autocannon. Prints a Markdown table (for bench/RESULTS.md).
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { c32address } from 'c32check';
import { makeSTXTokenTransfer, serializeTransaction } from '@stacks/transactions';
import pino from 'pino';
import { buildApiServer } from '../src/api/server.js';
import { decodeTransaction } from '../src/chain/index.js';
import { decodedColumns } from '../src/ingest/chain-rows.js';
import { openDatabase } from '../src/store/db.js';
import { migrate } from '../src/store/migrate.js';
import { Store } from '../src/store/store.js';
import { insertBlock, insertChainRows } from '../src/store/write/blocks.js';
import { addBlockContributions } from '../src/store/write/contributions.js';
import { type BlockRow, type ChainRows } from '../src/store/schema/rows.js';
import { ANCHORED_SEQUENCE, AssetEventType, EventKind, TxStatus } from '../src/store/schema/codes.js';
import { setChainTipBlock } from '../src/store/write/tip.js';
import { startPostgres } from '../test/support/postgres.js';

const { values } = parseArgs({
  options: {
    txs: { type: 'string', default: '1000000' },
    seconds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '8' },
    rounds: { type: 'string', default: '1000' },
  },
});
const HOT_TXS = Number(values.txs);
const SECONDS = Number(values.seconds);
const CONNECTIONS = Number(values.connections);
const ROUNDS = Number(values.rounds);
const TXS_PER_BLOCK = 100;
const BLOCKS_PER_BATCH = 50;
const SMALL_TXS = 10;

const logger = pino({ level: 'warn' });
const hex = (n: number, tag: string) => `0x${tag}${n.toString(16).padStart(64 - tag.length, '0')}`;
const address = (n: number) => c32address(26, n.toString(16).padStart(40, '0'));

const HOT = address(0xa11ce);
const SMALL = address(0x5a11);
const RECIPIENTS = Array.from({ length: 1000 }, (_, i) => address(0x100000 + i));

/** A real signed transfer, decoded once: the columns every generated tx shares (its payload varies). */
async function templateColumns() {
  const tx = await makeSTXTokenTransfer({
    recipient: RECIPIENTS[0],
    amount: 1n,
    senderKey: 'edf9aee84d9b7abc145504dde6726c64f369d37ee34ded868fabd876c26570bc01',
    fee: 180n,
    nonce: 0n,
    network: 'testnet',
  });
  const raw = `0x${serializeTransaction(tx)}`;
  return decodedColumns(`0x${tx.txid()}`, raw, decodeTransaction(raw));
}

function blockRow(height: number): BlockRow {
  return {
    index_block_hash: hex(height, 'b1'),
    block_hash: hex(height, 'b2'),
    block_height: height,
    parent_index_block_hash: hex(height - 1, 'b1'),
    parent_block_hash: hex(height - 1, 'b2'),
    parent_microblock_hash: hex(0, ''),
    parent_microblock_sequence: 0,
    burn_block_hash: hex(height, 'bb'),
    burn_block_height: 1000 + height,
    burn_block_time: 1_700_000_000 + height * 600,
    parent_burn_block_time: 1_700_000_000 + (height - 1) * 600,
    block_time: 1_700_000_000 + height * 600,
    miner_txid: hex(height, 'ee'),
    tenure_height: null,
    signer_bitvec: null,
    tx_count: TXS_PER_BLOCK,
    execution_cost_read_count: 0,
    execution_cost_read_length: 0,
    execution_cost_runtime: 0,
    execution_cost_write_count: 0,
    execution_cost_write_length: 0,
    canonical: true,
  };
}

/** Block `height`: HOT sends 1 µSTX per tx; the first SMALL_TXS txs of the chain go to SMALL. */
function blockRows(
  height: number,
  template: Awaited<ReturnType<typeof templateColumns>>,
  sequence: { n: number },
) {
  const block = blockRow(height);
  const rows: ChainRows = { txs: [], events: [], smartContracts: [], principalTxs: [] };
  for (let txIndex = 0; txIndex < TXS_PER_BLOCK; txIndex++) {
    const n = sequence.n++;
    const recipient = n < SMALL_TXS ? SMALL : RECIPIENTS[n % RECIPIENTS.length];
    const txId = hex(n + 1, 'f0');
    const located = {
      tx_id: txId,
      index_block_hash: block.index_block_hash,
      microblock_hash: '',
      block_height: height,
      tx_index: txIndex,
      microblock_sequence: ANCHORED_SEQUENCE,
      canonical: true,
      microblock_canonical: true,
    };
    rows.txs.push({
      ...template,
      tx_id: txId,
      nonce: n,
      sender_address: HOT,
      token_transfer_recipient: recipient,
      token_transfer_amount: '1',
      payload: {
        token_transfer: { recipient_address: recipient, amount: '1', memo: `0x${'00'.repeat(34)}` },
      },
      index_block_hash: block.index_block_hash,
      microblock_hash: '',
      block_hash: block.block_hash,
      block_height: height,
      block_time: block.block_time,
      burn_block_time: block.burn_block_time,
      burn_block_height: block.burn_block_height,
      parent_burn_block_time: block.parent_burn_block_time,
      parent_block_hash: block.parent_block_hash,
      parent_index_block_hash: block.parent_index_block_hash,
      tx_index: txIndex,
      microblock_sequence: ANCHORED_SEQUENCE,
      canonical: true,
      microblock_canonical: true,
      status: TxStatus.success,
      raw_result: '0x0703',
      result_repr: '(ok true)',
      vm_error: null,
      event_count: 1,
      execution_cost_read_count: 0,
      execution_cost_read_length: 0,
      execution_cost_runtime: 0,
      execution_cost_write_count: 0,
      execution_cost_write_length: 0,
    });
    rows.events.push({
      ...located,
      event_index: 0,
      kind: EventKind.stxAsset,
      asset_event_type: AssetEventType.transfer,
      sender: HOT,
      recipient,
      amount: '1',
      asset_identifier: null,
      value: null,
      value_repr: null,
      memo: '0x',
      contract_id: null,
      topic: null,
      locked_address: null,
      unlock_height: null,
      pox_name: null,
    });
    for (const principal of [HOT, recipient]) {
      rows.principalTxs.push({
        principal,
        tx_id: txId,
        index_block_hash: block.index_block_hash,
        microblock_hash: '',
        block_height: height,
        microblock_sequence: ANCHORED_SEQUENCE,
        tx_index: txIndex,
        canonical: true,
        microblock_canonical: true,
      });
    }
  }
  return { block, rows };
}

async function load(store: Store) {
  const template = await templateColumns();
  const blocks = Math.ceil(HOT_TXS / TXS_PER_BLOCK);
  const sequence = { n: 0 };
  const started = performance.now();
  for (let first = 1; first <= blocks; first += BLOCKS_PER_BATCH) {
    const last = Math.min(blocks, first + BLOCKS_PER_BATCH - 1);
    await store.transaction(async (sql) => {
      const hashes: string[] = [];
      const all: ChainRows = { txs: [], events: [], smartContracts: [], principalTxs: [] };
      let tip: BlockRow | undefined;
      for (let height = first; height <= last; height++) {
        const { block, rows } = blockRows(height, template, sequence);
        await insertBlock(sql, block);
        all.txs.push(...rows.txs);
        all.events.push(...rows.events);
        all.principalTxs.push(...rows.principalTxs);
        hashes.push(block.index_block_hash);
        tip = block;
      }
      await insertChainRows(sql, all);
      await addBlockContributions(sql, hashes);
      await setChainTipBlock(sql, tip!, [null, null, null, null]);
    });
    if (last % 1000 === 0 || last === blocks) {
      const rate = Math.round(sequence.n / ((performance.now() - started) / 1000));
      process.stderr.write(`\rloaded ${sequence.n} txs (${last}/${blocks} blocks, ${rate} txs/s)   `);
    }
  }
  process.stderr.write('\n');
  await store.sql`ANALYZE`;
  return (performance.now() - started) / 1000;
}

interface Target {
  label: string;
  path: string;
  bytes?: number;
  /** per-request latency, ms */
  samples: number[];
  rps?: number;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/**
 * Latency: ROUNDS rounds of one request to every target in turn (interleaved, so load from other processes
 * on a shared machine hits all targets alike), timed with a high-resolution clock over a keep-alive
 * connection. Throughput: autocannon with several connections, one target at a time.
 */
async function measure(base: string, targets: Target[], rounds: number) {
  for (const t of targets) {
    const res = await fetch(`${base}${t.path}`);
    const body = await res.text();
    if (res.status !== 200) throw new Error(`${t.path}: ${res.status} ${body.slice(0, 200)}`);
    t.bytes = body.length;
  }
  for (let round = -Math.min(200, rounds); round < rounds; round++) {
    for (let i = 0; i < targets.length; i++) {
      const t = targets[(((i + round) % targets.length) + targets.length) % targets.length];
      const started = process.hrtime.bigint();
      const res = await fetch(`${base}${t.path}`);
      await res.arrayBuffer();
      if (round >= 0) t.samples.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
  }
  for (const t of targets) {
    const result = await autocannon({ url: `${base}${t.path}`, connections: CONNECTIONS, duration: SECONDS });
    t.rps = result.requests.average;
  }
}

function summary(t: Target) {
  const sorted = [...t.samples].sort((a, b) => a - b);
  const mean = sorted.reduce((a, b) => a + b, 0) / sorted.length;
  return { p50: percentile(sorted, 50), p90: percentile(sorted, 90), p99: percentile(sorted, 99), mean };
}

const pg = await startPostgres();
try {
  const url = await pg.createDatabase('bench_accounts');
  const db = await openDatabase({ url, pgliteDir: '', poolMax: 1 });
  await migrate(db.sql);
  const store = new Store(db);
  try {
    const seconds = await load(store);
    const [{ n }] = await store.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM txs`;
    const [hot] = await store.sql<{ tx_count: number }[]>`
      SELECT tx_count FROM principal_stats WHERE principal = ${HOT}`;
    console.log(
      `\nloaded ${n} txs in ${seconds.toFixed(1)} s; ${HOT} has ${hot.tx_count} txs, ${SMALL} has 10\n`,
    );

    const app = await buildApiServer({ store, logger, apiVersion: 'bench' });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const address = app.server.address();
    const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    const offset = Math.floor(HOT_TXS * 0.9);
    const half = Math.floor(HOT_TXS / TXS_PER_BLOCK / 2);
    const twt = '/transactions_with_transfers';
    const target = (label: string, path: string): Target => ({ label, path, samples: [] });
    const hotPage = target(
      `hot: transactions_with_transfers?offset=${offset}&limit=50`,
      `/extended/v1/address/${HOT}${twt}?offset=${offset}&limit=50`,
    );
    const smallPage = target(
      'small: transactions_with_transfers?limit=50 (its 10 txs)',
      `/extended/v1/address/${SMALL}${twt}?limit=50`,
    );
    const hotBalances = target('hot: balances', `/extended/v1/address/${HOT}/balances`);
    const smallBalances = target('small: balances', `/extended/v1/address/${SMALL}/balances`);
    const hotPage10 = target(
      `hot: transactions_with_transfers?offset=${offset}&limit=10`,
      `/extended/v1/address/${HOT}${twt}?offset=${offset}&limit=10`,
    );
    const targets = [
      hotPage,
      smallPage,
      hotBalances,
      smallBalances,
      hotPage10,
      target(
        'hot: transactions_with_transfers?limit=50 (offset 0)',
        `/extended/v1/address/${HOT}${twt}?limit=50`,
      ),
      target(
        `hot: transactions_with_transfers?until_block=${half}&offset=${Math.floor(offset / 2)}&limit=50`,
        `/extended/v1/address/${HOT}${twt}?until_block=${half}&offset=${Math.floor(offset / 2)}&limit=50`,
      ),
      target(
        `small: balances?until_block=${half}`,
        `/extended/v1/address/${SMALL}/balances?until_block=${half}`,
      ),
    ];
    await measure(base, targets, ROUNDS);
    // an until_block balance of the hot principal sums its event rows: reported once, not in the rounds
    const historic = process.hrtime.bigint();
    const res = await fetch(`${base}/extended/v1/address/${HOT}/balances?until_block=${half}`);
    await res.arrayBuffer();
    const historicMs = Number(process.hrtime.bigint() - historic) / 1e6;
    // let the last load run's in-flight requests finish before closing
    await new Promise((resolve) => setTimeout(resolve, 500));
    await app.close();

    console.log(
      `| request | bytes | p50 ms | p90 ms | p99 ms | mean ms | req/s (${CONNECTIONS} connections) |`,
    );
    console.log('|---|---:|---:|---:|---:|---:|---:|');
    for (const t of targets) {
      const s = summary(t);
      console.log(
        `| ${t.label} | ${t.bytes} | ${s.p50.toFixed(2)} | ${s.p90.toFixed(2)} | ${s.p99.toFixed(2)} | ${s.mean.toFixed(2)} | ${Math.round(t.rps ?? 0)} |`,
      );
    }
    console.log(
      `\nhot: balances?until_block=${half} (sums ${Math.floor(HOT_TXS / 2)} event rows), one request: ${historicMs.toFixed(0)} ms\n`,
    );
    for (const [a, b] of [
      [hotPage, smallPage],
      [hotBalances, smallBalances],
      [hotPage10, smallPage],
    ]) {
      const ratio = summary(a).p50 / summary(b).p50;
      const meanRatio = summary(a).mean / summary(b).mean;
      console.log(
        `${a.label} vs ${b.label}: p50 ratio ${ratio.toFixed(2)}, mean ratio ${meanRatio.toFixed(2)} (${ratio <= 2 ? 'within' : 'NOT within'} 2x)`,
      );
    }
  } finally {
    await store.close();
  }
} finally {
  await pg.stop();
}
