import type { FastifyInstance } from 'fastify';
import {
  nftEventsInBlocks,
  principalTxsInBlocks,
  principalTxsInMicroblocks,
  principalTxsInStream,
  type ChainChanges,
  type NftEventRow,
  type PrincipalTxRow,
  type PushBlock,
  type PushMicroblock,
} from '../store/read/push.js';
import type { Sql } from '../store/db.js';
import type { Hub } from './hub.js';
import {
  addressBalanceMessage,
  addressTransactionMessage,
  nftTopicMessage,
  plainMessage,
  type PushMessage,
} from './messages.js';
import {
  addressBalancePayload,
  addressBalanceWithStreamPayload,
  addressTransactionPayload,
  blockPayload,
  microblockPayload,
  nftEventPayload,
  PayloadAsker,
  transactionPayload,
} from './payloads.js';
import {
  addressBalanceTopic,
  addressTransactionTopic,
  blockTopic,
  mempoolTopic,
  microblockTopic,
  nftAssetTopic,
  nftCollectionTopic,
  nftEventTopic,
  transactionTopic,
  type Topic,
} from './topics.js';

// One round's events, in chain order, each with its payload asked of the API at once (a few at a time):
// the txs a fork switch or a micro-fork orphaned, then each new block with its txs' events and the microblocks
// built on it (each with the address events of its txs), mempool changes between them in commit order. Only
// topics someone subscribes to are asked for.

/** Payload asks a round runs at once (each an in-process request to the API). */
const CONCURRENT_ASKS = 8;

export interface Pending {
  topic: Topic;
  message: Promise<PushMessage | undefined>;
  /** for a tx update: the version it pushes */
  version?: { txId: string; version: string | null };
}

export class RoundPlan {
  readonly pending: Pending[] = [];
  private readonly ask: PayloadAsker;
  private readonly limit = concurrency(CONCURRENT_ASKS);
  /** a tx changed twice in a round (received, then dropped) is pushed once, as it is at the end */
  private readonly mempoolPushed = new Set<string>();
  private nextMempool = 0;
  private touched: PrincipalTxRow[] = [];
  /** the subscribed principals' rows among the txs of the orphaned stream */
  private touchedInStream: PrincipalTxRow[] = [];
  /** the subscribed principals' rows among the txs of the pushed microblocks still unconfirmed */
  private touchedInMicroblocks: PrincipalTxRow[] = [];
  private nftEvents: NftEventRow[] = [];

  constructor(
    app: FastifyInstance,
    private readonly hub: Hub,
    private readonly changes: ChainChanges,
    /** the subscribed txs whose state changed, with their state now: each taken once pushed */
    private readonly changedTxs: Map<string, string | null>,
  ) {
    this.ask = new PayloadAsker(app);
  }

  /** The round's events in order. */
  async build(sql: Sql): Promise<Pending[]> {
    const { changes, hub } = this;
    const principals = [
      ...new Set(
        [...hub.topicsOf('address-transaction'), ...hub.topicsOf('address-stx-balance')].map(principalOf),
      ),
    ];
    this.touched = await principalTxsInBlocks(
      sql,
      [...changes.orphaned, ...changes.blocks].map((b) => b.index_block_hash),
      principals,
    );
    this.touchedInStream = await principalTxsInStream(sql, changes.orphanedStream, principals);
    this.touchedInMicroblocks = await principalTxsInMicroblocks(
      sql,
      changes.microblocks.map((m) => m.microblock_hash),
      principals,
    );
    const wantsNft =
      hub.has(nftEventTopic.key) ||
      hub.topicsOf('nft-asset-event').length > 0 ||
      hub.topicsOf('nft-collection-event').length > 0;
    if (wantsNft) {
      this.nftEvents = await nftEventsInBlocks(
        sql,
        changes.blocks.map((b) => b.index_block_hash),
      );
    }

    // a fork switch: the txs of the blocks that left the chain
    for (const block of changes.orphaned) {
      this.leftChain(block.tx_ids, this.touchedIn(block), addressBalancePayload);
    }
    // the txs of the pushed microblocks that left the stream (a micro-fork's replacing ones follow): the
    // balances pushed with the stream showed them, the stream's balances show them gone
    this.leftChain(changes.orphanedStream.tx_ids, this.touchedInStream, addressBalanceWithStreamPayload);
    const first = changes.blocks[0];
    if (changes.orphaned.length === 0 && first) this.microblocksOn(first.parent_index_block_hash);
    if (changes.blocks.length === 0) this.microblocksOn(changes.cursor.tip.index_block_hash);
    for (const block of changes.blocks) this.block(block);
    this.mempoolUntil(Number.MAX_SAFE_INTEGER);
    for (const txId of [...this.changedTxs.keys()]) this.txUpdate(txId);
    return this.pending;
  }

  private add(topic: Topic, build: () => Promise<PushMessage | undefined>, version?: Pending['version']) {
    if (this.hub.has(topic.key)) this.pending.push({ topic, message: this.limit(build), version });
  }

  /** A new block: the mempool changes before it, then it, its txs' events, and the microblocks on it. */
  private block(block: PushBlock) {
    if (block.message_id !== null) this.mempoolUntil(block.message_id - 1);
    this.add(blockTopic, async () => messageOf(blockTopic, await blockPayload(this.ask, block.block_hash)));
    for (const txId of block.tx_ids) this.txUpdate(txId);
    this.addressEvents(this.touchedIn(block), addressBalancePayload);
    for (const event of this.nftEvents) {
      if (event.index_block_hash !== block.index_block_hash) continue;
      const payload = () => nftEventPayload(this.ask, event.tx_id, event.event_index);
      const asset = nftAssetTopic(event.asset_identifier, event.value.toLowerCase());
      const collection = nftCollectionTopic(event.asset_identifier);
      this.add(nftEventTopic, async () => messageOf(nftEventTopic, await payload()));
      this.add(asset, async () => nftMessageOf(asset, await payload()));
      this.add(collection, async () => nftMessageOf(collection, await payload()));
    }
    this.microblocksOn(block.index_block_hash);
  }

  /** A subscribed tx whose state changed, placed where its change is (the rest at the end of the round). */
  private txUpdate(txId: string) {
    const version = this.changedTxs.get(txId);
    if (version === undefined) return;
    this.changedTxs.delete(txId);
    const topic = transactionTopic(txId);
    this.add(topic, async () => messageOf(topic, await transactionPayload(this.ask, txId)), {
      txId,
      version,
    });
  }

  private mempoolTx(txId: string) {
    if (this.mempoolPushed.has(txId)) return;
    this.mempoolPushed.add(txId);
    this.add(mempoolTopic, async () => {
      const text = await transactionPayload(this.ask, txId);
      // a tx mined since is no mempool event: its update goes to its own topic
      return text !== undefined && isMempoolTx(text) ? plainMessage(mempoolTopic, text) : undefined;
    });
  }

  /** The mempool messages up to the raw-log id `messageId`, in commit order. */
  private mempoolUntil(messageId: number) {
    const { mempool } = this.changes;
    for (; this.nextMempool < mempool.length; this.nextMempool++) {
      const change = mempool[this.nextMempool];
      if (change.message_id > messageId) return;
      for (const txId of [...change.added, ...change.dropped]) {
        this.mempoolTx(txId);
        this.txUpdate(txId);
      }
    }
  }

  /**
   * Txs that left the chain (orphaned with their block, or with their microblock): each one's update, a
   * mempool event for those back in it, and the balance of the subscribed principals they touched.
   */
  private leftChain(txIds: string[], touched: PrincipalTxRow[], balancePayload: BalancePayload) {
    for (const txId of txIds) {
      this.txUpdate(txId);
      this.mempoolTx(txId);
    }
    this.balances(touched, balancePayload);
  }

  /** The subscribed principals' rows among a block's txs. */
  private touchedIn(block: PushBlock): PrincipalTxRow[] {
    return this.touched.filter((row) => row.index_block_hash === block.index_block_hash);
  }

  /**
   * The txs of a block or of a microblock that joined the chain: each subscribed principal's
   * `address_tx_update` per tx it takes part in, then its balance (once).
   */
  private addressEvents(touched: PrincipalTxRow[], balancePayload: BalancePayload) {
    for (const row of touched) {
      const topic = addressTransactionTopic(row.principal);
      this.add(topic, async () => {
        const text = await addressTransactionPayload(this.ask, row.principal, row.tx_id);
        return text === undefined ? undefined : addressTransactionMessage(topic as never, text);
      });
    }
    this.balances(touched, balancePayload);
  }

  /** The balance of each principal of these rows (once each: the rows of one block or one stream). */
  private balances(touched: PrincipalTxRow[], balancePayload: BalancePayload) {
    const seen = new Set<string>();
    for (const row of touched) {
      if (seen.has(row.principal)) continue;
      seen.add(row.principal);
      const topic = addressBalanceTopic(row.principal);
      this.add(topic, async () => {
        const text = await balancePayload(this.ask, row.principal);
        return text === undefined ? undefined : addressBalanceMessage(topic as never, text);
      });
    }
  }

  /**
   * The microblocks on `anchor`, each followed by the address events of its txs while they are unconfirmed
   * (issue 32): a microblock a block of this round confirms has no such rows, its txs come with that block.
   */
  private microblocksOn(anchor: string) {
    for (const m of this.changes.microblocks) {
      if (m.parent_index_block_hash !== anchor) continue;
      this.add(microblockTopic, async () =>
        messageOf(microblockTopic, await microblockPayload(this.ask, m.microblock_hash)),
      );
      this.addressEvents(this.touchedInMicroblock(m), addressBalanceWithStreamPayload);
    }
  }

  /** The subscribed principals' rows among an unconfirmed microblock's txs. */
  private touchedInMicroblock(microblock: PushMicroblock): PrincipalTxRow[] {
    return this.touchedInMicroblocks.filter((row) => row.microblock_hash === microblock.microblock_hash);
  }
}

/** How a balance event asks its payload: anchored after a block, with the stream after a stream change. */
type BalancePayload = (ask: PayloadAsker, principal: string) => Promise<string | undefined>;

function messageOf(topic: Topic, payload: string | undefined): PushMessage | undefined {
  return payload === undefined ? undefined : plainMessage(topic, payload);
}

function nftMessageOf(topic: Topic, payload: string | undefined): PushMessage | undefined {
  return payload === undefined ? undefined : nftTopicMessage(topic as never, payload);
}

function principalOf(topic: Topic): string {
  return (topic as { principal: string }).principal;
}

/** A tx answer of the mempool (pending or dropped), not a mined one: mempool answers carry no block height. */
function isMempoolTx(text: string): boolean {
  return (JSON.parse(text) as { block_height?: number }).block_height === undefined;
}

/** Runs at most `n` of the functions given at once, in the order given. */
function concurrency(n: number) {
  let running = 0;
  const waiting: (() => void)[] = [];
  return <T>(fn: () => Promise<T>): Promise<T> => {
    const start = async () => {
      running++;
      try {
        return await fn();
      } finally {
        running--;
        waiting.shift()?.();
      }
    };
    if (running < n) return start();
    return new Promise<void>((resolve) => waiting.push(resolve)).then(start);
  };
}
