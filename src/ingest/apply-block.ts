import type { TransactionSql } from '../store/db.js';
import {
  blockTxIdsJson,
  canonicalBlocksAbove,
  canonicalMinedTxs,
  distinctTxKeys,
  getBlock,
  insertBlock,
  insertChainRows,
  insertMinerRewards,
  forgetEncodedTxIndexes,
  setBlocksCanonical,
  storeBlockTxIds,
  txIdsOfBlocks,
  txMinedTwice,
  type CanonicalTx,
  type StoredBlock,
} from '../store/write/blocks.js';
import { cutIntoStatements, sendAfter, sendAll } from '../store/write/bulk.js';
import {
  addBlockContributions,
  applyRowContributions,
  applyStoredContributions,
  assignOrdinals,
  removeBlockContributions,
} from '../store/write/contributions.js';
import { adoptGenesisRows } from '../store/write/genesis.js';
import { insertChainTotals, storeChainTotals } from '../store/write/chain-totals.js';
import { recomputeCustody, setCustodyFromRows } from '../store/write/nft-custody.js';
import {
  insertSponsorTxs,
  numberSponsorTxs,
  releaseSponsorTxs,
  sponsorRowsOf,
} from '../store/write/sponsor-txs.js';
import {
  collectMempoolGarbage,
  minedTxClaims,
  pruneMinedTxs,
  resolveSameNonce,
  restoreToMempool,
} from '../store/write/mempool.js';
import {
  dropStagedRows,
  insertMicroblocks,
  markMicroblocksConfirmed,
  markMicroblocksConfirmedByRestored,
  markMicroblocksOrphanedBy,
  microblockChain,
  orphanMicroblocks,
  stagedTxIndexes,
  unconfirmedMicroblocks,
} from '../store/write/microblocks.js';
import type { BlockRow, ChainRows, ChainTip, MinerRewardRow } from '../store/schema/rows.js';
import { loggedMessageBody } from '../store/write/message-log.js';
import { lockChainTip, setChainTipBlock, touchMempool } from '../store/write/tip.js';
import { InvalidMessageError, MessageConflictError } from '../errors.js';
import type { ApplyContext } from './context.js';
import {
  blockChainRows,
  blockRow,
  confirmedMicroblockRows,
  microblockHashesOf,
  minerRewardRows,
} from './decode-block.js';
import { checkAgainstParent } from './message-checks.js';
import { blockContentDigest } from '../protocol/block-digest.js';
import type { NewBlock } from '../protocol/payloads.js';

const ZERO_HASH = '0x0000000000000000000000000000000000000000000000000000000000000000';

/**
 * The tx index of a confirmed microblock tx, as the original API keeps it: a tx streamed in a microblock
 * and then confirmed by the block that is canonical as it arrives keeps the index it was streamed with (the
 * original updates the streamed row in place, its index included, and skips the block's copy); any other
 * row of it (a microblock first seen in the block, a sibling block, a block that becomes canonical later by
 * a reorg) has the index the block message gives it. A node numbers a microblock's txs from 0 in each
 * microblock, and a block's from 0 with its own txs first, so the two differ: mainnet-reorg-scenario1's
 * block 30 (streamed index 0, block index 1) answers 1 because its canonical copy is the second sibling.
 * Sets every row of the block's txs (decoded rows are reused when a message is applied again). Returns
 * whether any row's index changed.
 */
function placeConfirmedMicroblockTxs(
  rows: ChainRows,
  msg: NewBlock,
  accepted: ReadonlySet<string>,
  streamed: { tx_id: string; microblock_hash: string; tx_index: number }[],
): boolean {
  if (!msg.transactions.some((tx) => tx.microblock_hash)) return false;
  let changed = false;
  const key = (txId: string, microblockHash: string) => `${txId}|${microblockHash}`;
  const index = new Map<string, number>();
  for (const tx of msg.transactions) {
    if (tx.microblock_hash) index.set(key(tx.txid, tx.microblock_hash), tx.tx_index);
  }
  for (const tx of streamed) {
    if (accepted.has(tx.microblock_hash)) index.set(key(tx.tx_id, tx.microblock_hash), tx.tx_index);
  }
  for (const list of [rows.txs, rows.events, rows.principalTxs]) {
    for (const row of list) {
      if (row.microblock_hash === '') continue;
      const txIndex = index.get(key(row.tx_id, row.microblock_hash));
      if (txIndex !== undefined && txIndex !== row.tx_index) {
        row.tx_index = txIndex;
        changed = true;
      }
    }
  }
  return changed;
}

/**
 * What a `/new_block` changed: `applied`, or nothing because the block (its `index_block_hash`) is known:
 * `duplicate` when the message says what the stored one said, `reannounced` when it says something else.
 */
export type BlockOutcome = 'applied' | 'duplicate' | 'reannounced';

/** What the index holds around a new block, read together (one round trip) before anything is written. */
interface Surroundings {
  known: StoredBlock | undefined;
  tip: ChainTip;
  parent: StoredBlock | undefined;
  /** the unconfirmed microblocks (on the tip) */
  unconfirmed: { microblock_hash: string }[];
  /** the parent's microblocks the block confirms, up to its `parent_microblock` */
  accepted: string[];
  /** the streamed (staged) rows of the microblock txs the block carries */
  streamed: { tx_id: string; microblock_hash: string; tx_index: number }[];
  /** the block's txs already mined on the canonical chain */
  alreadyMined: CanonicalTx[];
}

async function readSurroundings(sql: TransactionSql, msg: NewBlock): Promise<Surroundings> {
  const [known, tip, parent, unconfirmed, accepted, streamed, alreadyMined] = await Promise.all([
    getBlock(sql, msg.index_block_hash),
    lockChainTip(sql),
    getBlock(sql, msg.parent_index_block_hash),
    unconfirmedMicroblocks(sql),
    msg.parent_microblock === ZERO_HASH
      ? []
      : microblockChain(sql, msg.parent_index_block_hash, msg.parent_microblock),
    stagedTxIndexes(sql, microblockHashesOf(msg)),
    canonicalMinedTxs(sql, txIdsOf(msg)),
  ]);
  return { known, tip, parent, unconfirmed, accepted, streamed, alreadyMined };
}

/**
 * Applies `/new_block`. A block higher than the tip becomes canonical ("higher wins"): it extends the tip
 * (`extendTipFromRowsInHand`, or `extendTipFromStoredRows` on the rare paths); if its parent is not
 * canonical, the parent's fork is restored first (`restoreFork`) and the blocks it replaces are orphaned. A
 * block at or below the tip is stored as a non-canonical sibling (`storeSiblingBlock`). A block already
 * known changes nothing (`compareWithStored`).
 *
 * The first block indexed may build on anything (the chain may be joined mid-way); after that, a block
 * whose parent was never received means messages are missing: it is refused (409, the node keeps re-sending
 * it) rather than indexed over a gap that would leave balances silently wrong. A block that does not follow
 * its parent (height, hash, burn height: `checkAgainstParent`), or mines a tx its chain already holds
 * (`refuseMinedAgain`), is refused with 400.
 *
 * Round trips: the reads are sent together, then (after a reorg's own steps, if any) every write is sent
 * without waiting for the previous one and awaited once (`sendAll`): the server runs them in order.
 */
export async function applyNewBlock(
  sql: TransactionSql,
  msg: NewBlock,
  ctx: ApplyContext,
): Promise<BlockOutcome> {
  const around = await readSurroundings(sql, msg);
  const { known, tip, parent } = around;
  if (known) return compareWithStored(sql, msg, known, ctx);
  await checkPlaceOnChain(sql, msg, around);
  const canonical = msg.block_height > tip.block_height;
  const adoptsGenesis = canonical && parent !== undefined && !parent.canonical && parent.block_height === 0;
  let orphanedByFork: string[] = [];
  if (canonical && parent && !parent.canonical && !adoptsGenesis) {
    orphanedByFork = await restoreFork(sql, parent, tip, ctx);
    refuseMinedAgain(msg, await canonicalMinedTxs(sql, txIdsOf(msg)), parent.block_height);
  }
  const stored = await storeBlockRows(sql, msg, ctx, around, { canonical, adoptsGenesis });
  if (!canonical) return storeSiblingBlock(sql, ctx, stored);
  // Microblocks: the new block confirms its parent's stream up to `parent_microblock`; every other
  // unconfirmed microblock (read before the reorg above, if any, which orphaned the ones it saw) is orphaned.
  const accepted = new Set(around.accepted);
  const orphanedMicroblocks = around.unconfirmed
    .map((m) => m.microblock_hash)
    .filter((hash) => !accepted.has(hash) && !orphanedByFork.includes(hash));
  if (adoptsGenesis || orphanedMicroblocks.length > 0 || ctx.readBackRows) {
    return extendTipFromStoredRows(sql, msg, ctx, stored, {
      accepted: around.accepted,
      orphanedMicroblocks,
      genesis: adoptsGenesis ? parent : undefined,
      tip,
    });
  }
  return extendTipFromRowsInHand(sql, msg, ctx, stored, around.accepted);
}

const txIdsOf = (msg: NewBlock) => msg.transactions.map((tx) => tx.txid);

/**
 * Where the block goes on the chain, checked before anything is written: its parent is indexed (but for the
 * first block), it follows its parent, and on a canonical parent it mines no tx that chain already holds.
 */
async function checkPlaceOnChain(sql: TransactionSql, msg: NewBlock, around: Surroundings): Promise<void> {
  const { tip, parent } = around;
  if (!parent && tip.block_height > 0) {
    throw new MessageConflictError(
      `block ${msg.block_height} (${msg.index_block_hash}): its parent ${msg.parent_index_block_hash} is not ` +
        `indexed (tip at height ${tip.block_height}); the messages before it are missing`,
    );
  }
  if (!parent) return;
  await checkAgainstParent(msg, parent, async () => !(await getBlock(sql, parent.parent_index_block_hash)));
  // On a canonical parent the block's chain is the canonical chain up to the parent: a tx mined there may
  // not be mined again. (Above the parent it may: the same tx in two competing forks.)
  if (parent.canonical) refuseMinedAgain(msg, around.alreadyMined, parent.block_height);
}

/** A new block's rows, and the statements inserting them that are not sent yet (`storeBlockRows`). */
interface StoredRows {
  block: BlockRow;
  rows: ChainRows;
  rewardRows: MinerRewardRow[];
  /** every row the block adds is in `rows` (not so when the payload repeats a tx: then they are read back) */
  fresh: boolean;
  /** the block's rows were numbered in the principal index as they were inserted */
  ordinalsOnInsert: boolean;
  /** the inserts not yet awaited (none when they had to be awaited already) */
  inserts: Promise<unknown>[];
}

/**
 * Builds the block's rows as placed (`canonical`), and sends their inserts: awaited already when what
 * follows must read them back (a large block cut into several statements, a payload repeating a tx), else
 * returned unawaited to go out with what follows.
 */
async function storeBlockRows(
  sql: TransactionSql,
  msg: NewBlock,
  ctx: ApplyContext,
  around: Surroundings,
  { canonical, adoptsGenesis }: { canonical: boolean; adoptsGenesis: boolean },
): Promise<StoredRows> {
  const block = blockRow(msg, canonical, ctx.contentHash);
  const { rows, encoded } = blockChainRows(msg, block, ctx);
  const accepted = canonical ? new Set(around.accepted) : new Set<string>();
  if (placeConfirmedMicroblockTxs(rows, msg, accepted, around.streamed)) forgetEncodedTxIndexes(encoded);
  // The rows of a block canonical on arrival are numbered in the principal index as they are inserted;
  // rows adopted from the genesis block join them first, so then the numbering runs afterwards.
  // (`ctx.readBackRows`: the test switch that takes the read-back paths, to prove them equal)
  const ordinalsOnInsert = canonical && !adoptsGenesis && !ctx.readBackRows;
  // The block is new (not known): so are its rows, unless the payload repeats a tx. Then every row it adds
  // is in `rows`, and what follows from them is computed from `rows` instead of read back.
  const fresh = !ctx.readBackRows && distinctTxKeys(rows.txs);
  // the tx-id list from the rows in hand when they are the rows stored, else read back once they are stored
  if (fresh) block.tx_ids_json = blockTxIdsJson(rows.txs);
  const rewardRows = minerRewardRows(msg, canonical);
  // Statements sent from here on are awaited by `sendAll` before anything else can fail or wait.
  // The chain's totals at the block, from its rows in hand when they are the rows it keeps (not so when block 1
  // adopts block 0's rows: counted once adopted, `extendTipFromStoredRows`).
  const totalsInHand = fresh && !adoptsGenesis;
  const inserts = [
    insertBlock(sql, block),
    insertMicroblocks(sql, confirmedMicroblockRows(msg, ctx.receivedAt)),
    insertChainRows(sql, rows, { ordinals: ordinalsOnInsert, fresh, encoded }),
    insertMinerRewards(sql, rewardRows),
    ...(totalsInHand ? [insertChainTotals(sql, block, rows.txs)] : []),
  ];
  const stored = { block, rows, rewardRows, fresh, ordinalsOnInsert, inserts };
  // A large block's rows go in several statements: the tx-id list is read back, and the same-nonce
  // same-nonce resolution (`resolveSameNonce`, `pruneMinedTxs`) reads the block's txs, once all are stored.
  if (fresh && !cutIntoStatements(sql, rows.txs.length)) return stored;
  await sendAll(inserts);
  if (!fresh) await storeBlockTxIds(sql, block.index_block_hash);
  if (!fresh && !adoptsGenesis) await storeChainTotals(sql, block.index_block_hash);
  return { ...stored, inserts: [] };
}

/** A block at or below the tip: stored as a non-canonical sibling. */
async function storeSiblingBlock(
  sql: TransactionSql,
  ctx: ApplyContext,
  stored: StoredRows,
): Promise<'applied'> {
  // the original resolves the same-nonce pairs of every block's txs, canonical or not (a pair's winner is then
  // the canonical chain's tx, else the best fee)
  const resolved = resolveSameNonce(sql, stored.rows.txs);
  const last = sendAll([...stored.inserts, resolved]);
  ctx.writesSent?.();
  await last;
  // A pair the resolution changes (one a reorg left as it was: the orphaned tx back to pending beside the
  // better-paying tx it had replaced) changes what the mempool shows while the tip stays: the mempool version
  // must move, or the answers and tags keyed on it would go on showing the tx pending
  // (test/api/cached-tx-answers.test.ts, "a sibling block that settles a same-nonce pair").
  if ((await resolved) > 0) await touchMempool(sql, new Date(ctx.receivedAt * 1000));
  return 'applied';
}

/**
 * The new tip, the common path: what follows its rows (balance contributions, mempool pruning, the tip) is
 * computed from the rows in hand and sent at once with their inserts.
 */
async function extendTipFromRowsInHand(
  sql: TransactionSql,
  msg: NewBlock,
  ctx: ApplyContext,
  stored: StoredRows,
  accepted: string[],
): Promise<'applied'> {
  const { block, rows, rewardRows } = stored;
  const last = sendAll([
    ...stored.inserts,
    ...(accepted.length > 0
      ? [markMicroblocksConfirmed(sql, accepted, msg), dropStagedRows(sql, accepted)]
      : []),
    stored.fresh
      ? applyRowContributions(sql, { events: rows.events, txs: rows.txs, rewards: rewardRows }, 1)
      : applyStoredContributions(sql, [block.index_block_hash], 1),
    stored.fresh ? insertSponsorRowsInHand(sql, stored) : numberSponsorTxs(sql, [block.index_block_hash]),
    stored.fresh ? setCustodyFromRows(sql, rows.events) : recomputeCustody(sql, [block.index_block_hash]),
    // `rows.txs` are the block's txs (a tx the payload repeats twice prunes the same rows twice), and the
    // block is the new tip: its txs are the last mined of the pairs they claim (`pruneMinedTxs`)
    ...afterContributions(sql, msg, block, ctx, pruneMinedTxs(sql, rows.txs, { atTip: true })),
  ]);
  ctx.writesSent?.();
  await last;
  return 'applied';
}

/**
 * The sponsor rows of a new tip's rows in hand, numbered after its principal index rows' counts: sent with
 * its inserts (the server runs them in order), or once they are done when the principal index rows are cut
 * into statements, whose later ones are sent only as the earlier ones are answered (a block of at most 250
 * txs may have more than 250 principal index rows; test/ingest/block-paths.test.ts).
 */
function insertSponsorRowsInHand(sql: TransactionSql, stored: StoredRows): Promise<unknown> {
  const sponsorRows = sponsorRowsOf(stored.rows);
  if (sponsorRows.length === 0 || !cutIntoStatements(sql, stored.rows.principalTxs.length)) {
    return insertSponsorTxs(sql, sponsorRows);
  }
  return sendAfter(sql, Promise.all(stored.inserts), () => insertSponsorTxs(sql, sponsorRows));
}

/**
 * The new tip, the rare paths (it adopts the genesis block's rows, or orphans unconfirmed microblocks; or
 * the test switch `readBackRows`): run step by step, from the rows read back once stored.
 */
async function extendTipFromStoredRows(
  sql: TransactionSql,
  msg: NewBlock,
  ctx: ApplyContext,
  stored: StoredRows,
  steps: { accepted: string[]; orphanedMicroblocks: string[]; genesis?: StoredBlock; tip: ChainTip },
): Promise<'applied'> {
  const { block } = stored;
  await sendAll(stored.inserts);
  if (steps.genesis) {
    await adoptGenesisRows(sql, steps.genesis.index_block_hash, block);
    await storeChainTotals(sql, block.index_block_hash);
  }
  await confirmMicroblocks(sql, steps.accepted, steps.orphanedMicroblocks, msg, ctx, steps.tip);
  await applyStoredContributions(sql, [block.index_block_hash], 1);
  if (!stored.ordinalsOnInsert) await assignOrdinals(sql, [block.index_block_hash]);
  await numberSponsorTxs(sql, [block.index_block_hash]);
  await recomputeCustody(sql, [block.index_block_hash]);
  const mined = await minedTxClaims(sql, [block.index_block_hash]);
  await sendAll(afterContributions(sql, msg, block, ctx, pruneMinedTxs(sql, mined)));
  return 'applied';
}

/**
 * A block already indexed arrives again in another message: it changes nothing, whatever the message says.
 * Its `index_block_hash` commits to the block (the hash of its header with the consensus hash of its
 * tenure), so a second message under it is that block; a node re-sends its blocks after a restart, and
 * re-announces its genesis block without the boot transactions the first announcement carried (regtest
 * nodes entering epoch 3.0 do, between two later blocks). Refusing it would stall the node, which re-sends
 * until it gets a 200. Whether the message says the same is judged on content (`blockContentDigest`, so a
 * re-serialization is a plain duplicate) against the message that brought the block, kept in the raw log;
 * other content is `reannounced`: logged with both messages' content hashes and counted in the ingest
 * metrics. Blocks indexed before migration 019 have no message to compare with and are taken as the same.
 *
 * Only here, on a block that arrives twice, is the content digest computed: it costs 45-105 µs per tx
 * (measured on the demo chain's blocks), half as much as decoding the block, too much for every block.
 */
async function compareWithStored(
  sql: TransactionSql,
  msg: NewBlock,
  known: StoredBlock,
  ctx: ApplyContext,
): Promise<'duplicate' | 'reannounced'> {
  if (!known.message_hash) return 'duplicate';
  const body = await loggedMessageBody(sql, known.message_hash);
  if (body === undefined) return 'duplicate';
  const stored = JSON.parse(body) as NewBlock;
  if (blockContentDigest(stored) === blockContentDigest(msg)) return 'duplicate';
  ctx.logger.warn(
    {
      block_height: msg.block_height,
      index_block_hash: msg.index_block_hash,
      stored_content_hash: known.message_hash,
      received_content_hash: ctx.contentHash,
      stored_txs: stored.transactions.length,
      received_txs: msg.transactions.length,
    },
    'a known block was announced again with other content: the stored block is kept',
  );
  return 'reannounced';
}

/**
 * A tx is mined at most once on a chain: a node never mines one again (its nonce is spent), and a block that
 * did would count its transfers twice. Refuses (400) the block when one of its txs is among `mined` at or
 * below `maxHeight` (its own chain's part of the canonical chain).
 */
function refuseMinedAgain(msg: NewBlock, mined: readonly CanonicalTx[], maxHeight: number): void {
  const again = mined.find((m) => m.block_height <= maxHeight);
  if (!again) return;
  throw new InvalidMessageError(
    `block ${msg.block_height} (${msg.index_block_hash}): transaction ${again.tx_id} is already mined on ` +
      `its chain, in the block at height ${again.block_height}`,
  );
}

/**
 * What follows the contributions of a new canonical block: mempool pruning (`pruned`, sent by the caller
 * just before), the tip, mempool upkeep.
 */
function afterContributions(
  sql: TransactionSql,
  msg: NewBlock,
  block: BlockRow,
  ctx: ApplyContext,
  pruned: Promise<unknown>,
) {
  return [
    pruned,
    setChainTipBlock(sql, block, [
      msg.pox_v1_unlock_height,
      msg.pox_v2_unlock_height,
      msg.pox_v3_unlock_height,
      msg.pox_v4_unlock_height,
    ]),
    collectMempoolGarbage(sql, block.block_height, block.signer_bitvec !== null, ctx.receivedAt),
    touchMempool(sql, new Date(ctx.receivedAt * 1000)),
  ];
}

/**
 * The new block confirms the microblock stream of its parent up to `parent_microblock`. The staged copies
 * of confirmed microblock txs give way to the block's rows; every other unconfirmed microblock is orphaned
 * and its txs go back to the mempool.
 */
async function confirmMicroblocks(
  sql: TransactionSql,
  accepted: string[],
  orphaned: string[],
  msg: NewBlock,
  ctx: ApplyContext,
  tip: ChainTip,
) {
  await markMicroblocksConfirmed(sql, accepted, msg);
  await dropStagedRows(sql, accepted);
  const orphanedTxIds = await orphanMicroblocks(sql, orphaned);
  await markMicroblocksOrphanedBy(sql, orphaned, msg);
  await restoreToMempool(sql, orphanedTxIds, ctx.receivedAt, tip.block_height);
}

/**
 * Makes the fork ending at `parent` canonical: walks down to the last canonical ancestor, orphans every
 * canonical block above it (and the unconfirmed microblocks on the old tip), then restores the fork's blocks.
 * Txs of orphaned blocks that the restored fork does not contain go back to the mempool.
 */
async function restoreFork(
  sql: TransactionSql,
  parent: StoredBlock,
  tip: ChainTip,
  ctx: ApplyContext,
): Promise<string[]> {
  const fork: StoredBlock[] = [];
  let block: StoredBlock | undefined = parent;
  while (block && !block.canonical) {
    fork.unshift(block);
    block = await getBlock(sql, block.parent_index_block_hash);
  }
  const forkPoint = block ? block.block_height : fork[0].block_height - 1;
  const orphaned = (await canonicalBlocksAbove(sql, forkPoint)).map((b) => b.index_block_hash);
  const restored = fork.map((b) => b.index_block_hash);
  ctx.logger.info(
    { fork_point: forkPoint, orphaned: orphaned.length, restored: restored.length },
    'reorg: restoring a fork',
  );

  const orphanedMicroblocks = (await unconfirmedMicroblocks(sql)).map((m) => m.microblock_hash);
  const orphanedMicroblockTxIds = await orphanMicroblocks(sql, orphanedMicroblocks);
  await removeBlockContributions(sql, orphaned);
  await releaseSponsorTxs(sql, orphaned);
  await setBlocksCanonical(sql, orphaned, false);
  await setBlocksCanonical(sql, restored, true);
  await markMicroblocksConfirmedByRestored(sql, restored);
  // The fork's blocks were stored while another chain was canonical: none of their txs may be mined twice
  // on the chain they now make.
  const twice = await txMinedTwice(sql, restored);
  if (twice) {
    throw new InvalidMessageError(
      `the fork ending at block ${parent.block_height} (${parent.index_block_hash}) mines transaction ` +
        `${twice.tx_id} a second time (first in the block at height ${twice.block_height}): it cannot become ` +
        `canonical`,
    );
  }
  await addBlockContributions(sql, restored);
  await numberSponsorTxs(sql, restored);
  // the NFTs either side moved: their latest event is now on the restored chain, or below the fork point
  await recomputeCustody(sql, [...orphaned, ...restored]);
  await pruneMinedTxs(sql, await minedTxClaims(sql, restored));
  const orphanedTxIds = [...(await txIdsOfBlocks(sql, orphaned)), ...orphanedMicroblockTxIds];
  await restoreToMempool(sql, orphanedTxIds, ctx.receivedAt, tip.block_height);
  return orphanedMicroblocks;
}
