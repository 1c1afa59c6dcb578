import { txIdFromRaw } from '../../chain/transaction.js';
import type { Sql, TransactionSql } from '../db.js';
import { laterPiecesColumn, readMessageText } from '../message-text.js';
import { EventKind } from '../schema/codes.js';
import { statement } from '../statement.js';
import { unconfirmedRow, visibleRow } from '../visibility.js';

// What live push reads (src/push): what changed in the index since the last state a reader pushed. Ingest
// applies messages one at a time, each in one transaction with its row in the raw log (observer_messages, ids
// in commit order), so "since" is a position in that log plus the chain tip pushed last. A round reads, in one
// snapshot: the blocks that left and joined the canonical chain (a fork switch included), the microblocks
// streamed since (a micro-fork included: the miner re-streams from some sequence with other microblocks), and
// the mempool messages (new and dropped txs), each placed in commit order by its log id.

/**
 * The block a reader has pushed last, and the last microblock of its stream it has pushed (sequence -1 and
 * hash '': none). The hash tells a micro-fork: the same sequence may later name another microblock.
 */
export interface PushedTip {
  index_block_hash: string;
  block_height: number;
  microblock_sequence: number;
  microblock_hash: string;
}

/** Where a reader's pushing stands: the last log message and the chain tip it has pushed. */
export interface PushCursor {
  messageId: number;
  tip: PushedTip;
}

/** A block that joined or left the canonical chain, with its txs in chain order. */
export interface PushBlock {
  index_block_hash: string;
  block_hash: string;
  block_height: number;
  parent_index_block_hash: string;
  /** the raw-log id of the message that brought it (null for a block indexed before migration 019) */
  message_id: number | null;
  tx_ids: string[];
}

export interface PushMicroblock {
  microblock_hash: string;
  microblock_sequence: number;
  /** the anchor block the stream builds on */
  parent_index_block_hash: string;
}

/**
 * The pushed microblocks that left the canonical stream: replaced by a micro-fork, left out by the block that
 * confirmed the stream, or orphaned with the pushed tip by a fork switch.
 */
export interface OrphanedStream {
  /** the pushed microblocks no longer canonical, lowest sequence first */
  microblock_hashes: string[];
  /** their txs that no visible row holds now (back in the mempool, or gone), in stream order */
  tx_ids: string[];
}

/** One mempool message: the txs it added (`/new_mempool_tx`) or dropped (`/drop_mempool_tx`). */
export interface MempoolChange {
  message_id: number;
  added: string[];
  dropped: string[];
}

export interface ChainChanges {
  /** blocks that left the canonical chain since the cursor (a fork switch), lowest first */
  orphaned: PushBlock[];
  /** blocks that joined it, lowest first (after a switch: the winning fork from the fork point up) */
  blocks: PushBlock[];
  /** the pushed microblocks that left the canonical stream since the cursor, with their txs */
  orphanedStream: OrphanedStream;
  /**
   * canonical microblocks streamed since the cursor, by anchor in chain order, then sequence; on the pushed
   * tip after a micro-fork, from the first sequence it replaced
   */
  microblocks: PushMicroblock[];
  /** mempool messages since the cursor, in commit order */
  mempool: MempoolChange[];
  /** where the next round starts */
  cursor: PushCursor;
  /** false: more changes were waiting than one round reads (read again from `cursor`) */
  complete: boolean;
  /** the state of each tx id asked about (`txVersions`), in the same snapshot */
  txVersions: Map<string, string | null>;
}

/** Most blocks, and most mempool messages, one round reads: a reader catching up pushes in bounded steps. */
const PUSH_ROUND_BLOCKS = 100;
const PUSH_ROUND_MESSAGES = 1000;

const readCursorRow = statement<PushedTip & { message_id: number }, []>(`
  SELECT index_block_hash, block_height, microblock_sequence, microblock_hash,
    (SELECT coalesce(max(id), 0) FROM observer_messages)::int8 AS message_id
  FROM chain_tip`);

/** Where pushing starts: the newest message of the log and the tip now (nothing before is pushed). */
export async function readPushCursor(sql: Sql | TransactionSql): Promise<PushCursor> {
  const [row] = await readCursorRow(sql);
  if (!row) throw new Error('the chain_tip table holds no row');
  const { message_id, ...tip } = row;
  return { messageId: message_id, tip };
}

type BlockRow = Omit<PushBlock, 'tx_ids'> & { canonical: boolean; tx_ids_json: string };
const blockColumns =
  'b.index_block_hash, b.block_hash, b.block_height, b.parent_index_block_hash, b.canonical, b.tx_ids_json';
// the log row of a block's message: a block indexed before migration 019 has no message hash
const messageIdOf = `(SELECT m.id FROM observer_messages m WHERE m.content_hash = b.message_hash AND NOT m.skipped)::int8 AS message_id`;

/**
 * The pushed tip and its ancestors up to the first canonical one: the blocks a fork switch orphaned (not
 * canonical), then the fork point (canonical). Just the tip when it is still canonical.
 */
const tipAncestry = statement<BlockRow, [string]>(`
  WITH RECURSIVE line AS (
    SELECT ${blockColumns}, b.message_hash FROM blocks b WHERE b.index_block_hash = $1
    UNION ALL
    SELECT ${blockColumns}, b.message_hash FROM blocks b JOIN line ON b.index_block_hash = line.parent_index_block_hash
    WHERE NOT line.canonical
  )
  SELECT b.index_block_hash, b.block_hash, b.block_height, b.parent_index_block_hash, b.canonical, b.tx_ids_json,
    ${messageIdOf}
  FROM line b ORDER BY b.block_height`);

const canonicalBlocksAbove = statement<BlockRow, [number, number]>(`
  SELECT ${blockColumns}, ${messageIdOf}
  FROM blocks b WHERE b.canonical AND b.block_height > $1 ORDER BY b.block_height LIMIT $2`);

const microblocksOn = statement<PushMicroblock, [string[]]>(`
  SELECT microblock_hash, microblock_sequence, parent_index_block_hash
  FROM microblocks WHERE parent_index_block_hash = ANY($1::text[]) AND microblock_canonical
  ORDER BY microblock_sequence`);

/** A pushed microblock and its ancestors in its stream on `$2`, with whether each is still canonical. */
const pushedStream = statement<
  { microblock_hash: string; microblock_sequence: number; microblock_canonical: boolean },
  [string, string]
>(`
  WITH RECURSIVE line AS (
    SELECT microblock_hash, microblock_sequence, microblock_parent_hash, microblock_canonical FROM microblocks
    WHERE microblock_hash = $1 AND parent_index_block_hash = $2
    UNION ALL
    SELECT m.microblock_hash, m.microblock_sequence, m.microblock_parent_hash, m.microblock_canonical
    FROM microblocks m JOIN line ON m.microblock_hash = line.microblock_parent_hash
    WHERE m.parent_index_block_hash = $2 AND line.microblock_sequence > 0
  )
  SELECT microblock_hash, microblock_sequence, microblock_canonical FROM line ORDER BY microblock_sequence`);

// The staged rows of orphaned microblocks stay (write/microblocks.ts orphanMicroblocks), so their txs are
// still there to name; a tx the replacing stream (or a block since) mined again is visible there instead.
const orphanedStreamTxsOf = statement<{ tx_id: string }, [string[]]>(`
  SELECT t.tx_id FROM txs t
  WHERE ${unconfirmedRow('t')} AND t.microblock_hash = ANY($1::text[])
    AND NOT EXISTS (SELECT 1 FROM txs c WHERE c.tx_id = t.tx_id AND ${visibleRow('c', 'true')})
  ORDER BY t.microblock_sequence, t.tx_index`);

/** The txs of these orphaned microblocks that no visible row holds now, in stream order. */
async function orphanedStreamTxs(tx: TransactionSql, microblockHashes: string[]): Promise<string[]> {
  if (microblockHashes.length === 0) return [];
  return (await orphanedStreamTxsOf(tx, microblockHashes)).map((r) => r.tx_id);
}

interface MempoolMessageRow {
  id: number;
  path: string;
  payload: string;
  later_pieces: number;
}

/** The mempool messages of the log after `afterId`, up to `upTo`, at most `limit`. */
function mempoolMessages(tx: TransactionSql, afterId: number, upTo: number, limit: number) {
  return tx<MempoolMessageRow[]>`
    SELECT m.id, m.path, m.payload, ${laterPiecesColumn(tx)}
    FROM observer_messages m
    WHERE m.id > ${afterId} AND m.id <= ${upTo} AND NOT m.skipped
      AND m.path IN ('/new_mempool_tx', '/drop_mempool_tx')
    ORDER BY m.id LIMIT ${limit}`;
}

function pushBlock({ canonical: _, tx_ids_json, ...row }: BlockRow): PushBlock {
  // tx_ids_json lists the block's txs newest first (write/blocks.ts)
  return { ...row, tx_ids: (JSON.parse(tx_ids_json) as string[]).reverse() };
}

/** The tx ids a mempool message added or dropped. */
function mempoolChange(id: number, path: string, text: string): MempoolChange {
  if (path === '/new_mempool_tx') {
    return {
      message_id: id,
      added: (JSON.parse(text) as string[]).map((raw) => txIdFromRaw(raw)),
      dropped: [],
    };
  }
  return {
    message_id: id,
    added: [],
    dropped: (JSON.parse(text) as { dropped_txids: string[] }).dropped_txids,
  };
}

/**
 * What changed since `cursor`, read in one snapshot (a read-only repeatable-read transaction, so the tip,
 * the blocks, the log and the state of the txs `txIds` agree). At most `limits.blocks` blocks and
 * `limits.messages` mempool messages: past either, the round stops before the first left out, in commit
 * order, and `complete` is false.
 */
export async function readChangesSince(
  sql: Sql,
  cursor: PushCursor,
  txIds: string[] = [],
  limits = { blocks: PUSH_ROUND_BLOCKS, messages: PUSH_ROUND_MESSAGES },
): Promise<ChainChanges> {
  return sql.begin('ISOLATION LEVEL REPEATABLE READ READ ONLY', async (tx) => {
    const now = await readPushCursor(tx);
    const pushed = cursor.tip;
    const ancestry = pushed.index_block_hash ? await tipAncestry(tx, pushed.index_block_hash) : [];
    const orphaned = ancestry.filter((b) => !b.canonical).map(pushBlock);
    const forkPoint = ancestry.find((b) => b.canonical);
    const forkHeight =
      forkPoint?.block_height ?? (orphaned[0] ? orphaned[0].block_height - 1 : pushed.block_height);
    let blocks = (await canonicalBlocksAbove(tx, forkHeight, limits.blocks + 1)).map(pushBlock);
    const rows = await mempoolMessages(tx, cursor.messageId, now.messageId, limits.messages + 1);

    // where this round ends in the log: the snapshot's newest message, unless a bound cuts it earlier
    let upTo = now.messageId;
    if (blocks.length > limits.blocks) {
      blocks = blocks.slice(0, limits.blocks);
      upTo = blocks[blocks.length - 1].message_id ?? upTo;
    }
    if (rows.length > limits.messages) upTo = Math.min(upTo, rows[limits.messages - 1].id);
    const complete = upTo === now.messageId;
    blocks = blocks.filter((b) => b.message_id === null || b.message_id <= upTo);
    const mempool: MempoolChange[] = [];
    for (const row of rows) {
      if (row.id > upTo) break;
      const text = await readMessageText(tx, row.id, row.payload, row.later_pieces);
      mempool.push(mempoolChange(row.id, row.path, text));
    }

    const samePushedTip = orphaned.length === 0 && forkPoint !== undefined;
    const stream = await microblocksSince(tx, pushed, samePushedTip, blocks);
    const tip = tipAfter(pushed, samePushedTip, forkPoint, blocks, stream);
    const orphanedStream = {
      microblock_hashes: stream.replaced,
      tx_ids: await orphanedStreamTxs(tx, stream.replaced),
    };
    const versions = await txVersions(tx, txIds);
    return {
      orphaned,
      orphanedStream,
      blocks,
      microblocks: stream.microblocks,
      mempool,
      cursor: { messageId: upTo, tip },
      complete,
      txVersions: versions,
    };
  });
}

/** The microblocks a round pushes, and what it learnt of the stream pushed on the pushed tip. */
interface StreamChanges {
  microblocks: PushMicroblock[];
  /** the pushed microblocks no longer canonical, lowest sequence first */
  replaced: string[];
  /** the last pushed microblock still canonical on the pushed tip (sequence -1, hash '': none) */
  kept: { microblock_sequence: number; microblock_hash: string };
}

/**
 * Microblocks: the stream on the pushed tip after what was pushed of it (when that tip is still canonical),
 * and the streams on the blocks taken (those they confirm come with the next block's, the unconfirmed one on
 * the tip last), by anchor in chain order, then sequence. When the pushed microblock is no longer canonical
 * (a micro-fork: the miner re-streamed from some sequence), the stream on the pushed tip is sent again from
 * the first sequence whose pushed microblock left the canonical stream.
 */
async function microblocksSince(
  tx: TransactionSql,
  pushed: PushedTip,
  samePushedTip: boolean,
  blocks: PushBlock[],
): Promise<StreamChanges> {
  const anchors = [
    ...(samePushedTip ? [pushed.index_block_hash] : []),
    ...blocks.map((b) => b.index_block_hash),
  ];
  const canonical = anchors.length > 0 ? await microblocksOn(tx, anchors) : [];
  const onPushed = samePushedTip
    ? canonical.filter((m) => m.parent_index_block_hash === pushed.index_block_hash)
    : [];
  // the pushed microblock left the canonical stream: a micro-fork, a block that confirmed less of the
  // stream, or a fork switch that orphaned the pushed tip and its stream with it
  const left =
    pushed.microblock_hash !== '' && !onPushed.some((m) => m.microblock_hash === pushed.microblock_hash);
  // a canonical microblock's ancestors are canonical (a micro-fork orphans from a sequence up): the pushed
  // ones that left the stream are the end of the pushed line
  const replaced = left
    ? (await pushedStream(tx, pushed.microblock_hash, pushed.index_block_hash)).filter(
        (m) => !m.microblock_canonical,
      )
    : [];
  const resendFrom = replaced[0]?.microblock_sequence ?? pushed.microblock_sequence + 1;
  const keptRow = onPushed.filter((m) => m.microblock_sequence < resendFrom).at(-1);
  const kept =
    !left || !samePushedTip
      ? { microblock_sequence: pushed.microblock_sequence, microblock_hash: pushed.microblock_hash }
      : keptRow
        ? { microblock_sequence: keptRow.microblock_sequence, microblock_hash: keptRow.microblock_hash }
        : { microblock_sequence: -1, microblock_hash: '' };
  const order = new Map(anchors.map((hash, i) => [hash, i]));
  const microblocks = canonical
    .filter(
      (m) =>
        !samePushedTip ||
        m.parent_index_block_hash !== pushed.index_block_hash ||
        m.microblock_sequence >= resendFrom,
    )
    .sort(
      (a, b) =>
        order.get(a.parent_index_block_hash)! - order.get(b.parent_index_block_hash)! ||
        a.microblock_sequence - b.microblock_sequence,
    );
  return { microblocks, replaced: replaced.map((m) => m.microblock_hash), kept };
}

/** The tip a round leaves pushed: its last block (the pushed one when none), with its stream's last. */
function tipAfter(
  pushed: PushedTip,
  samePushedTip: boolean,
  forkPoint: { index_block_hash: string; block_height: number } | undefined,
  blocks: PushBlock[],
  stream: StreamChanges,
): PushedTip {
  const last = blocks[blocks.length - 1];
  const onPushed = !last && (samePushedTip || !forkPoint);
  const base: { index_block_hash: string; block_height: number } = last ?? (onPushed ? pushed : forkPoint!);
  const onTip = stream.microblocks.filter((m) => m.parent_index_block_hash === base.index_block_hash);
  const lastOnTip = onTip[onTip.length - 1];
  const streamTip = lastOnTip
    ? { microblock_sequence: lastOnTip.microblock_sequence, microblock_hash: lastOnTip.microblock_hash }
    : onPushed
      ? stream.kept
      : { microblock_sequence: -1, microblock_hash: '' };
  return { index_block_hash: base.index_block_hash, block_height: base.block_height, ...streamTip };
}

export interface PrincipalTxRow {
  principal: string;
  tx_id: string;
  /** the block that mined it ('' for a staged row: a microblock no block has confirmed) */
  index_block_hash: string;
  /** the microblock that streamed it ('' when the block itself mined it) */
  microblock_hash: string;
}

const principalTxsIn = statement<PrincipalTxRow, [string[], string[]]>(`
  SELECT principal, tx_id, index_block_hash, microblock_hash FROM principal_txs
  WHERE index_block_hash = ANY($1::text[]) AND principal = ANY($2::text[])
  ORDER BY index_block_hash, microblock_sequence, tx_index`);

/**
 * The txs of these blocks that each of these principals takes part in (sender, recipient, contract, event
 * party: the principal index), grouped by block in the order the blocks are given, then in chain order.
 */
export async function principalTxsInBlocks(
  sql: Sql,
  blocks: string[],
  principals: string[],
): Promise<PrincipalTxRow[]> {
  if (blocks.length === 0 || principals.length === 0) return [];
  const rows = await principalTxsIn(sql, blocks, principals);
  const order = new Map(blocks.map((hash, i) => [hash, i]));
  // a stable sort: each block's rows keep the statement's chain order
  return rows.sort((a, b) => order.get(a.index_block_hash)! - order.get(b.index_block_hash)!);
}

// Only staged rows: a microblock a block has confirmed since has none left (write/microblocks.ts
// dropStagedRows; the block's rows hold its txs), and an orphaned one keeps its own (orphanMicroblocks).
const stagedPrincipalTxsIn = statement<PrincipalTxRow, [string[], string[]]>(`
  SELECT principal, tx_id, index_block_hash, microblock_hash FROM principal_txs
  WHERE ${unconfirmedRow('')} AND microblock_hash = ANY($1::text[]) AND principal = ANY($2::text[])
  ORDER BY microblock_sequence, tx_index`);

/**
 * The txs of these microblocks, while no block has confirmed them, that each of these principals takes part
 * in (the principal index of their staged rows), in stream order. None for a microblock confirmed since: its
 * txs are the confirming block's (`principalTxsInBlocks`).
 */
export async function principalTxsInMicroblocks(
  sql: Sql,
  microblockHashes: string[],
  principals: string[],
): Promise<PrincipalTxRow[]> {
  if (microblockHashes.length === 0 || principals.length === 0) return [];
  return stagedPrincipalTxsIn(sql, microblockHashes, principals);
}

/**
 * The txs of an orphaned stream (`OrphanedStream`) that each of these principals takes part in (the
 * principal index of their staged rows), in stream order.
 */
export async function principalTxsInStream(
  sql: Sql,
  stream: OrphanedStream,
  principals: string[],
): Promise<PrincipalTxRow[]> {
  if (stream.tx_ids.length === 0) return [];
  // the stream's txs mined again elsewhere (`OrphanedStream.tx_ids` leaves them out) did not leave the chain
  const left = new Set(stream.tx_ids);
  const rows = await principalTxsInMicroblocks(sql, stream.microblock_hashes, principals);
  return rows.filter((row) => left.has(row.tx_id));
}

export interface NftEventRow {
  tx_id: string;
  event_index: number;
  index_block_hash: string;
  asset_identifier: string;
  /** the token's Clarity value, hex */
  value: string;
}

const nftEventsIn = statement<NftEventRow, [string[]]>(`
  SELECT tx_id, event_index, index_block_hash, asset_identifier, value FROM events
  WHERE index_block_hash = ANY($1::text[]) AND kind = ${EventKind.nftAsset}
  ORDER BY index_block_hash, microblock_sequence, tx_index, event_index`);

/** The NFT events (mint, transfer, burn) of these blocks, grouped by block in the order given, in chain order. */
export async function nftEventsInBlocks(sql: Sql, blocks: string[]): Promise<NftEventRow[]> {
  if (blocks.length === 0) return [];
  const rows = await nftEventsIn(sql, blocks);
  const order = new Map(blocks.map((hash, i) => [hash, i]));
  return rows.sort((a, b) => order.get(a.index_block_hash)! - order.get(b.index_block_hash)!);
}

// What `GET /extended/v1/tx/{id}?unanchored=true` shows of a tx depends on: its visible mined row (where and
// how it was mined), else its mempool row (status, replacement, receipt), else nothing.
const txVersionsOf = statement<{ tx_id: string; version: string | null }, [string[]]>(`
  SELECT v.tx_id, coalesce(
    (SELECT 'mined:' || t.index_block_hash || ':' || t.microblock_hash || ':' || t.status FROM txs t
      WHERE t.tx_id = v.tx_id AND ${visibleRow('t', 'true')} LIMIT 1),
    (SELECT 'mempool:' || m.status || ':' || m.receipt_time || ':' || coalesce(m.replaced_by_tx_id, '') FROM mempool_txs m
      WHERE m.tx_id = v.tx_id)) AS version
  FROM unnest($1::text[]) AS v(tx_id)`);

/**
 * A version of each tx id's state as `GET /extended/v1/tx/{id}?unanchored=true` shows it: two reads of an id
 * give the same version exactly when that answer is unchanged (but for its event page); null when not found.
 */
export async function txVersions(
  sql: Sql | TransactionSql,
  txIds: string[],
): Promise<Map<string, string | null>> {
  if (txIds.length === 0) return new Map();
  const rows = await txVersionsOf(sql, txIds);
  return new Map(rows.map((r) => [r.tx_id, r.version]));
}
