import { readTsv } from '../../src/protocol/tsv.js';

// One large /new_block built from a generated chain: every transaction of the chain's canonical blocks after
// the first, mined in a single block on top of the first (nonces stay in order; tx and event indexes are
// renumbered as a node numbers a block's; microblock txs become anchored ones). What a stacks-node would send
// for a block of that many transactions, to measure what a large message costs the process that ingests it.

interface BlockPayload {
  block_height: number;
  index_block_hash: string;
  parent_index_block_hash: string;
  transactions: Record<string, unknown>[];
  events: { event_index: number }[];
  [key: string]: unknown;
}

/** The first block of the chain (a message body) and the large block built on it. */
export async function largeBlock(file: string): Promise<{ first: string; large: string; txs: number }> {
  const blocks = new Map<string, BlockPayload>();
  let tip: BlockPayload | undefined;
  for await (const message of readTsv(file)) {
    if (message.path !== '/new_block') continue;
    const block = JSON.parse(message.payload) as BlockPayload;
    blocks.set(block.index_block_hash, block);
    if (!tip || block.block_height > tip.block_height) tip = block;
  }
  const chain: BlockPayload[] = [];
  for (let b = tip; b; b = blocks.get(b.parent_index_block_hash)) chain.unshift(b);
  const [first, second, ...rest] = chain;
  const transactions: Record<string, unknown>[] = [];
  const events: { event_index: number }[] = [];
  for (const block of [second, ...rest]) {
    const sorted = [...block.events].sort((a, b) => a.event_index - b.event_index);
    for (const event of sorted) events.push({ ...event, event_index: events.length });
    for (const tx of block.transactions) {
      transactions.push({
        ...tx,
        tx_index: transactions.length,
        microblock_hash: null,
        microblock_sequence: null,
        microblock_parent_hash: null,
      });
    }
  }
  const large = {
    ...second,
    parent_microblock: '0x' + '00'.repeat(32),
    parent_microblock_sequence: 0,
    matured_miner_rewards: [],
    anchored_cost: null,
    transactions,
    events,
  };
  return { first: JSON.stringify(first), large: JSON.stringify(large), txs: transactions.length };
}
