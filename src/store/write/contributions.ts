import type { TransactionSql } from '../db.js';
import { columnArrays, PREPARED, unnestSelectList } from './bulk.js';
import { withOnePlan } from './plans.js';
import type { ColumnSpec, ColumnType } from '../schema/tables.js';
import type { EventRow, MinerRewardRow } from '../schema/rows.js';
import { EventKind } from '../schema/codes.js';
import { feePayer, type FeePayerColumns } from '../fee-payer.js';

// What a set of anchored blocks adds to the running per-principal state: STX, FT and NFT totals and the
// principal transaction ordinals. Applied with +1 when blocks become canonical and -1 when a reorg orphans
// them; orphaned blocks are always the newest ones, so the ordinals they free are the tail of each list.

/** The columns of a block's rows that its balance contributions are summed from. */
export interface ContributionRows {
  events: readonly Pick<EventRow, 'kind' | 'sender' | 'recipient' | 'amount' | 'asset_identifier'>[];
  txs: readonly (FeePayerColumns & { fee_rate: string })[];
  rewards: readonly Pick<
    MinerRewardRow,
    | 'recipient'
    | 'coinbase_amount'
    | 'tx_fees_anchored'
    | 'tx_fees_streamed_confirmed'
    | 'tx_fees_streamed_produced'
  >[];
}

interface StxContribution {
  principal: string;
  sent: bigint;
  received: bigint;
  fees: bigint;
  rewards: bigint;
}

interface AssetContribution {
  principal: string;
  asset_identifier: string;
  sent: bigint;
  received: bigint;
}

/**
 * A table of running totals that contributions are added to: its key columns (the contribution's fields of
 * the same names, text), and each total column with the contribution's field added to it.
 */
interface TotalsTable<Contribution> {
  columns: ColumnSpec<Contribution>;
  /** `INSERT ... ON CONFLICT DO UPDATE` adding a contribution to its key's totals, or inserting it. */
  text: string;
}

function totalsTable<Contribution>(
  table: string,
  key: readonly (keyof Contribution & string)[],
  totals: readonly (readonly [column: string, field: keyof Contribution & string, type: ColumnType])[],
): TotalsTable<Contribution> {
  const columns: ColumnSpec<Contribution> = [
    ...key.map((name) => [name, 'text'] as const),
    ...totals.map(([, field, type]) => [field, type] as const),
  ];
  const totalColumns = totals.map(([column]) => column);
  const text = `INSERT INTO ${table} AS b (${[...key, ...totalColumns].join(', ')})
    SELECT ${unnestSelectList(columns)}
    ON CONFLICT (${key.join(', ')}) DO UPDATE SET
      ${totalColumns.map((c) => `${c} = b.${c} + excluded.${c}`).join(',\n      ')}`;
  return { columns, text };
}

const stxBalances = totalsTable<StxContribution>(
  'stx_balances',
  ['principal'],
  [
    ['total_sent', 'sent', 'numeric'],
    ['total_received', 'received', 'numeric'],
    ['total_fees_sent', 'fees', 'numeric'],
    ['total_miner_rewards_received', 'rewards', 'numeric'],
  ],
);
const ftBalances = totalsTable<AssetContribution>(
  'ft_balances',
  ['principal', 'asset_identifier'],
  [
    ['total_sent', 'sent', 'numeric'],
    ['total_received', 'received', 'numeric'],
  ],
);
const nftBalances = totalsTable<AssetContribution>(
  'nft_balances',
  ['principal', 'asset_identifier'],
  [
    ['sent_count', 'sent', 'int8'],
    ['received_count', 'received', 'int8'],
  ],
);

/** The statement adding these contributions to their table's totals, to send; none when there are none. */
function addToTotals<Contribution extends object>(
  sql: TransactionSql,
  table: TotalsTable<Contribution>,
  contributions: Map<string, Contribution>,
): (() => Promise<unknown>) | undefined {
  if (contributions.size === 0) return undefined;
  return () =>
    sql.unsafe(table.text, columnArrays(sql, table.columns, [...contributions.values()]), PREPARED).execute();
}

const INTEGER = /^[0-9]+$/;

/**
 * An amount as stored: the observer payload schema admits only u128 decimal strings (protocol/payloads.ts
 * `Amount`), and numeric reads back as the same digits, so anything else is a broken invariant, not input.
 */
function integer(value: string | null, what: string): bigint {
  if (value === null || !INTEGER.test(value)) throw new Error(`${what}: amount ${value} is not an integer`);
  return BigInt(value);
}

/**
 * Adds (sign 1) or removes (sign -1) what a set of blocks contributes to the running balances: STX sent and
 * received by asset events, fees by their payer (fee-payer.ts), matured miner rewards; FT amounts and NFT
 * counts sent and received per asset. Summed here from the blocks' rows (in hand for a block being inserted,
 * or read back by `readContributionRows`), then one upsert per table from arrays. (This replaced an
 * equivalent set of INSERT ... SELECT statements reading the rows back: summing rows already in hand spares
 * the block's hot write path that read; one rule serves both.)
 */
export function applyRowContributions(
  sql: TransactionSql,
  rows: ContributionRows,
  sign: 1 | -1,
): Promise<unknown> {
  const stx = new Map<string, StxContribution>();
  const ft = new Map<string, AssetContribution>();
  const nft = new Map<string, AssetContribution>();
  const stxOf = (principal: string) => {
    let c = stx.get(principal);
    if (!c) stx.set(principal, (c = { principal, sent: 0n, received: 0n, fees: 0n, rewards: 0n }));
    return c;
  };
  const assetOf = (map: Map<string, AssetContribution>, principal: string, asset: string) => {
    const key = `${principal}\n${asset}`;
    let c = map.get(key);
    if (!c) map.set(key, (c = { principal, asset_identifier: asset, sent: 0n, received: 0n }));
    return c;
  };
  const amount = sign === 1 ? integer : (value: string | null, what: string) => -integer(value, what);

  for (const e of rows.events) {
    if (e.sender === null && e.recipient === null) continue;
    if (e.kind === EventKind.stxAsset) {
      const value = amount(e.amount, 'stx event');
      if (e.sender !== null) stxOf(e.sender).sent += value;
      if (e.recipient !== null) stxOf(e.recipient).received += value;
    } else if (e.kind === EventKind.ftAsset || e.kind === EventKind.nftAsset) {
      if (e.asset_identifier === null) throw new Error('asset event without asset identifier');
      const isFt = e.kind === EventKind.ftAsset;
      const value = isFt ? amount(e.amount, 'ft event') : BigInt(sign);
      const map = isFt ? ft : nft;
      if (e.sender !== null) assetOf(map, e.sender, e.asset_identifier).sent += value;
      if (e.recipient !== null) assetOf(map, e.recipient, e.asset_identifier).received += value;
    }
  }
  for (const t of rows.txs) {
    const payer = feePayer(t);
    if (payer === null) throw new Error('sponsored tx without sponsor address');
    stxOf(payer).fees += amount(t.fee_rate, 'fee');
  }
  for (const r of rows.rewards) {
    stxOf(r.recipient).rewards +=
      amount(r.coinbase_amount, 'coinbase') +
      amount(r.tx_fees_anchored, 'reward') +
      amount(r.tx_fees_streamed_confirmed, 'reward') +
      amount(r.tx_fees_streamed_produced, 'reward');
  }

  // upserts from arrays, one plan each (store/write/plans.ts), sent together
  const statements = [
    addToTotals(sql, stxBalances, stx),
    addToTotals(sql, ftBalances, ft),
    addToTotals(sql, nftBalances, nft),
  ].filter((send) => send !== undefined);
  if (statements.length === 0) return Promise.resolve();
  return withOnePlan(sql, () => Promise.all(statements.map((send) => send())));
}

/** The stored rows of a set of blocks that `applyRowContributions` sums (all of them, as stored). */
async function readContributionRows(
  sql: TransactionSql,
  indexBlockHashes: string[],
): Promise<ContributionRows> {
  if (indexBlockHashes.length === 0) return { events: [], txs: [], rewards: [] };
  const kinds = [EventKind.stxAsset, EventKind.ftAsset, EventKind.nftAsset];
  const [events, txs, rewards] = await Promise.all([
    sql<ContributionRows['events'][number][]>`
      SELECT kind, sender, recipient, amount::text AS amount, asset_identifier FROM events
      WHERE index_block_hash = ANY(${indexBlockHashes}) AND kind = ANY(${kinds})`.execute(),
    sql<ContributionRows['txs'][number][]>`
      SELECT sender_address, sponsored, sponsor_address, fee_rate::text AS fee_rate FROM txs
      WHERE index_block_hash = ANY(${indexBlockHashes})`.execute(),
    sql<ContributionRows['rewards'][number][]>`
      SELECT recipient, coinbase_amount::text AS coinbase_amount, tx_fees_anchored::text AS tx_fees_anchored,
        tx_fees_streamed_confirmed::text AS tx_fees_streamed_confirmed,
        tx_fees_streamed_produced::text AS tx_fees_streamed_produced
      FROM miner_rewards WHERE index_block_hash = ANY(${indexBlockHashes})`.execute(),
  ]);
  return { events, txs, rewards };
}

/** `applyRowContributions` of blocks whose rows are stored (a reorg, or a block whose rows were not all new). */
export async function applyStoredContributions(
  sql: TransactionSql,
  indexBlockHashes: string[],
  sign: 1 | -1,
): Promise<void> {
  await applyRowContributions(sql, await readContributionRows(sql, indexBlockHashes), sign);
}

/**
 * Numbers the principal index rows of newly canonical blocks after each principal's existing rows, in chain
 * order (height, microblock sequence, tx index), and raises the principals' tx counts.
 */
export async function assignOrdinals(sql: TransactionSql, indexBlockHashes: string[]): Promise<void> {
  if (indexBlockHashes.length === 0) return;
  // Every row of the blocks is numbered, as `insertChainRows` numbers them on insert: a block's rows are all
  // microblock-canonical (only the staged rows of unconfirmed microblocks are ever orphaned, `orphanMicroblocks`),
  // so no filter on it, which the insert path could not share (test/ingest/block-paths.test.ts).
  // Two statements, each joining tables by index: numbering after the current count, then raising it.
  // (The rows updated are found as the ranked ones are, by the blocks' index: the table has no key on a
  // row's identity, migration 028.)
  // (One statement joining the new rows with the RETURNING of the count upsert planned as a nested loop
  // over two CTEs: quadratic in the rows of the blocks.)
  await sql`
    WITH ranked AS (
      SELECT principal, tx_id, index_block_hash, microblock_hash,
        row_number() OVER (PARTITION BY principal ORDER BY block_height, microblock_sequence, tx_index) AS rn
      FROM principal_txs
      WHERE index_block_hash = ANY(${indexBlockHashes})
    )
    UPDATE principal_txs AS p SET ordinal = coalesce(s.tx_count, 0) + r.rn
    FROM ranked r LEFT JOIN principal_stats s ON s.principal = r.principal
    WHERE p.index_block_hash = ANY(${indexBlockHashes}) AND p.principal = r.principal AND p.tx_id = r.tx_id
      AND p.index_block_hash = r.index_block_hash AND p.microblock_hash = r.microblock_hash`;
  await sql`
    INSERT INTO principal_stats AS s (principal, tx_count)
    SELECT principal, count(*) FROM principal_txs
    WHERE index_block_hash = ANY(${indexBlockHashes})
    GROUP BY principal
    ON CONFLICT (principal) DO UPDATE SET tx_count = s.tx_count + excluded.tx_count`;
}

/** Clears the ordinals of orphaned blocks' rows and lowers the principals' tx counts. */
async function releaseOrdinals(sql: TransactionSql, indexBlockHashes: string[]): Promise<void> {
  if (indexBlockHashes.length === 0) return;
  await sql`
    WITH released AS (
      UPDATE principal_txs SET ordinal = NULL
      WHERE index_block_hash = ANY(${indexBlockHashes}) AND ordinal IS NOT NULL
      RETURNING principal
    )
    UPDATE principal_stats AS s SET tx_count = s.tx_count - r.n
    FROM (SELECT principal, count(*) AS n FROM released GROUP BY principal) AS r
    WHERE s.principal = r.principal`;
}

/** Everything a block adds once it is canonical. */
export async function addBlockContributions(sql: TransactionSql, indexBlockHashes: string[]): Promise<void> {
  await applyStoredContributions(sql, indexBlockHashes, 1);
  await assignOrdinals(sql, indexBlockHashes);
}

/** Undoes `addBlockContributions` for blocks a reorg orphans. */
export async function removeBlockContributions(
  sql: TransactionSql,
  indexBlockHashes: string[],
): Promise<void> {
  await applyStoredContributions(sql, indexBlockHashes, -1);
  await releaseOrdinals(sql, indexBlockHashes);
}
