import { BURNCHAIN_OP_RAW_TX, hexToBuffer, txIdFromRaw } from '../chain/index.js';
import type { BlockTransaction, ChainEvent, NewBlock, NewMicroblocks } from '../protocol/payloads.js';
import { InvalidMessageError } from '../errors.js';

// What a stacks-node guarantees about the messages it sends, checked before anything is written: a message
// that breaks one did not come from a node (or was damaged on the way), and applying it could corrupt the
// index for good (a block at height 1,000,000 on a parent at the tip would stay the tip forever, every real
// block after it stored as a fork). Each is refused with 400 naming what is wrong.
//
// Checked against the recorded node output in ../shared/fixtures/event-replay (mainnet, regtest, mocknet,
// reorgs, out-of-order microblocks) and the demo chain: none of them breaks a rule below. (Not a rule: that
// a stream's first microblock names the block hash of the block it streams after. The recorded mocknet
// stream names another.)

/**
 * A transaction's id is the SHA-512/256 of its bytes (`txIdFromRaw`): anything else is not that tx. Returns
 * the bytes (none for a burnchain-op tx), which the codec decodes next (`buildChainRows`): the hex is decoded
 * once.
 */
function checkTxId(tx: Pick<BlockTransaction, 'txid' | 'raw_tx'>): Buffer | undefined {
  if (tx.raw_tx === BURNCHAIN_OP_RAW_TX) return undefined;
  const bytes = hexToBuffer(tx.raw_tx);
  const actual = txIdFromRaw(bytes);
  if (actual !== tx.txid.toLowerCase()) {
    throw new InvalidMessageError(
      `transaction ${tx.txid}: its id is not the hash of its raw_tx (which hashes to ${actual})`,
    );
  }
  return bytes;
}

/**
 * A block's transactions are numbered 0..n-1 (`tx_index`, the microblock txs it confirms included), each
 * id is its bytes' hash, its events have distinct `event_index` values (numbered across the block), and
 * every event belongs to one of its transactions. Returns each transaction's raw bytes, in the message's
 * order (see `checkTxId`).
 */
export function checkBlockMessage(msg: NewBlock): (Buffer | undefined)[] {
  const where = `block ${msg.block_height} (${msg.index_block_hash})`;
  const n = msg.transactions.length;
  const seen = new Uint8Array(n);
  const rawTxBytes = new Array<Buffer | undefined>(n);
  for (let i = 0; i < n; i++) {
    const tx = msg.transactions[i];
    rawTxBytes[i] = checkTxId(tx);
    if (tx.tx_index >= n) {
      throw new InvalidMessageError(
        `${where}: tx_index ${tx.tx_index} of ${tx.txid} is out of range (the block has ${n} transactions, ` +
          `numbered 0..${n - 1})`,
      );
    }
    if (seen[tx.tx_index]) throw new InvalidMessageError(`${where}: tx_index ${tx.tx_index} appears twice`);
    seen[tx.tx_index] = 1;
  }
  checkEvents(where, msg.transactions, msg.events);
  return rawTxBytes;
}

/**
 * A microblocks message: ids are hashes as in a block, each microblock's transactions agree on its sequence and parent and have distinct
 * `tx_index` values, a microblock whose parent is in the same message follows it (sequence + 1), and the
 * events are as a block's (distinct indexes, each of a transaction of the message).
 */
export function checkMicroblocksMessage(msg: NewMicroblocks): void {
  const where = `microblocks on ${msg.parent_index_block_hash}`;
  const microblocks = new Map<string, { sequence: number; parent: string; txIndexes: Set<number> }>();
  for (const tx of msg.transactions) {
    checkTxId(tx);
    const known = microblocks.get(tx.microblock_hash);
    if (!known) {
      microblocks.set(tx.microblock_hash, {
        sequence: tx.microblock_sequence,
        parent: tx.microblock_parent_hash,
        txIndexes: new Set([tx.tx_index]),
      });
      continue;
    }
    if (known.sequence !== tx.microblock_sequence || known.parent !== tx.microblock_parent_hash) {
      throw new InvalidMessageError(
        `${where}: the transactions of microblock ${tx.microblock_hash} disagree on its sequence or parent`,
      );
    }
    if (known.txIndexes.has(tx.tx_index)) {
      throw new InvalidMessageError(
        `${where}: tx_index ${tx.tx_index} appears twice in microblock ${tx.microblock_hash}`,
      );
    }
    known.txIndexes.add(tx.tx_index);
  }
  for (const [hash, microblock] of microblocks) {
    const parent = microblocks.get(microblock.parent);
    if (parent && parent.sequence + 1 !== microblock.sequence) {
      throw new InvalidMessageError(
        `${where}: microblock ${hash} has sequence ${microblock.sequence}, its parent ${microblock.parent} ` +
          `${parent.sequence}`,
      );
    }
  }
  checkEvents(where, msg.transactions, msg.events);
}

function checkEvents(where: string, transactions: readonly { txid: string }[], events: ChainEvent[]): void {
  const txIds = new Set<string>();
  for (const tx of transactions) txIds.add(tx.txid);
  const indexes = new Set<number>();
  for (const event of events) {
    if (indexes.has(event.event_index)) {
      throw new InvalidMessageError(`${where}: event_index ${event.event_index} appears twice`);
    }
    indexes.add(event.event_index);
    if (!txIds.has(event.txid)) {
      throw new InvalidMessageError(
        `${where}: event ${event.event_index} belongs to transaction ${event.txid}, which is not in the message`,
      );
    }
  }
}

/** The parent as stored, and whether it is the first block of this index (its own parent unknown). */
export interface ParentBlock {
  block_hash: string;
  block_height: number;
  burn_block_height: number;
}

/**
 * A block follows its parent: one higher, naming the parent's block hash, mined in a burn block no lower
 * than the parent's (equal in Nakamoto, where a tenure's blocks share a burn block). `parentIsRoot` tells
 * whether the parent is the first block indexed, received without its own parent (a replay or a node that
 * joined mid-chain): its burn height was never checked and is not held against its children (the recorded
 * mainnet-reorg-scenario1 starts with block 1 at burn height 666067 and its child at 666054). It is called
 * only when the burn height is below the parent's, as that costs a lookup.
 */
export async function checkAgainstParent(
  msg: NewBlock,
  parent: ParentBlock,
  parentIsRoot: () => Promise<boolean>,
): Promise<void> {
  const where = `block ${msg.block_height} (${msg.index_block_hash})`;
  if (msg.block_height !== parent.block_height + 1) {
    throw new InvalidMessageError(
      `${where}: block_height is not its parent's height + 1 (the parent ${msg.parent_index_block_hash} ` +
        `is at height ${parent.block_height})`,
    );
  }
  if (msg.parent_block_hash.toLowerCase() !== parent.block_hash.toLowerCase()) {
    throw new InvalidMessageError(
      `${where}: parent_block_hash ${msg.parent_block_hash} is not the block hash of its parent ` +
        `${msg.parent_index_block_hash} (${parent.block_hash})`,
    );
  }
  if (msg.burn_block_height < parent.burn_block_height && !(await parentIsRoot())) {
    throw new InvalidMessageError(
      `${where}: burn_block_height ${msg.burn_block_height} is below its parent's (${parent.burn_block_height})`,
    );
  }
}
