import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import {
  cachedChainState,
  CHAIN_STATE_TTL_MS,
  chainStateOutdated,
  onChainStateChange,
} from '../store/read/chain-state.js';
import {
  nftEventsInBlocks,
  principalTxsInBlocks,
  readChangesSince,
  readPushCursor,
  txVersions,
  type ChainChanges,
  type MempoolChange,
  type PushBlock,
  type PushCursor,
} from '../store/read/push.js';
import type { Store } from '../store/store.js';
import type { Hub, HubListener } from './hub.js';
import {
  addressBalanceMessage,
  addressTransactionMessage,
  nftTopicMessage,
  plainMessage,
  type PushMessage,
} from './messages.js';
import {
  addressBalancePayload,
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

// The feed: after each change ingest commits, what it changed, as events in chain order, to the hub.
//
// It wakes on the chain state's announcements (this process's ingest, or another's NOTIFY:
// store/read/chain-state.ts) and, for a replica that hears none, on a look at the cached chain state every
// CHAIN_STATE_TTL_MS. A round reads what changed since the last one (store/read/push.ts: the blocks that left
// and joined the canonical chain, microblocks, mempool messages) and turns it into events, each placed where
// its change is in the chain: the txs a fork switch orphaned, then each new block with its txs' events and
// the microblocks built on it, mempool changes between them in commit order. A tx subscription compares the
// tx's state (store/read/push.ts `txVersions`) with the one last pushed, so it hears of every change,
// whatever made it. Rounds run one at a time; nothing is read while nobody subscribes.

/** Payload asks a round runs at once (each an in-process request to the API). */
const CONCURRENT_ASKS = 8;

interface Pending {
  topic: Topic;
  message: Promise<PushMessage | undefined>;
  /** for a tx update: the version it pushes */
  version?: { txId: string; version: string | null };
}

export class PushFeed implements HubListener {
  private cursor: PushCursor | undefined;
  /** per subscribed tx id: its state as last pushed (or read at subscription) */
  private readonly txStates = new Map<string, string | null>();
  private lane: Promise<void> = Promise.resolve();
  private roundWaiting = false;
  private stateKey: string | undefined;
  private poll: NodeJS.Timeout | undefined;
  private readonly stopListening: () => void;
  private closed = false;
  private lastErrorAt = 0;

  constructor(
    private readonly app: FastifyInstance,
    private readonly store: Store,
    private readonly hub: Hub,
    private readonly log: FastifyBaseLogger,
  ) {
    this.stopListening = onChainStateChange(store, () => this.schedule());
    hub.listen(this);
  }

  async watch(topic: Topic): Promise<void> {
    await this.inLane(async () => {
      this.cursor ??= await readPushCursor(this.store.sql);
      this.startPolling();
      if (topic.kind === 'transaction' && !this.txStates.has(topic.txId)) {
        const versions = await txVersions(this.store.sql, [topic.txId]);
        this.txStates.set(topic.txId, versions.get(topic.txId) ?? null);
      }
    });
  }

  unwatch(topic: Topic): void {
    if (topic.kind === 'transaction') this.txStates.delete(topic.txId);
    if (this.hub.isEmpty()) {
      // nobody listens: nothing is read until someone does, and then from that moment on
      this.cursor = undefined;
      this.stopPolling();
    }
  }

  /** A round after those queued (several announcements while one runs make one more round). */
  schedule(): void {
    if (this.roundWaiting || this.closed) return;
    this.roundWaiting = true;
    void this.inLane(async () => {
      this.roundWaiting = false;
      try {
        while (!(await this.round()));
      } catch (err) {
        // the database may be down: the next announcement or look tries again from the same cursor
        this.stateKey = undefined;
        if (Date.now() - this.lastErrorAt > 10_000) {
          this.lastErrorAt = Date.now();
          this.log.warn({ err }, 'live push could not read what changed; trying again on the next change');
        }
      }
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    this.stopListening();
    this.stopPolling();
    await this.lane;
  }

  private inLane(task: () => Promise<void>): Promise<void> {
    const run = this.lane.then(task);
    this.lane = run.catch(() => {});
    return run;
  }

  private startPolling() {
    if (this.poll) return;
    this.poll = setInterval(() => {
      cachedChainState(this.store).then(
        (state) => {
          const key = `${state.index_block_hash}:${state.microblock_hash}:${state.mempool_version}`;
          if (key === this.stateKey) return;
          this.stateKey = key;
          this.schedule();
        },
        () => {},
      );
    }, CHAIN_STATE_TTL_MS);
    this.poll.unref();
  }

  private stopPolling() {
    clearInterval(this.poll);
    this.poll = undefined;
  }

  /** One round; false when more changes wait than it read. */
  private async round(): Promise<boolean> {
    const cursor = this.cursor;
    if (!cursor || this.hub.isEmpty()) return true;
    const changes = await readChangesSince(this.store.sql, cursor, [...this.txStates.keys()]);
    // the payloads asked next must be read under a chain state at least as new as these changes (a
    // replica: no announcement dropped the state the API keeps)
    chainStateOutdated(this.store);
    const pending = await this.plan(changes);
    this.cursor = changes.cursor;
    for (const { message, version } of pending) {
      const ready = await message;
      if (version) this.txStates.set(version.txId, version.version);
      if (ready) this.hub.deliver(ready);
    }
    return changes.complete;
  }

  /** The round's events in order, their payloads asked at once (a few at a time). */
  private async plan(changes: ChainChanges): Promise<Pending[]> {
    const ask = new PayloadAsker(this.app);
    const limit = concurrency(CONCURRENT_ASKS);
    const hub = this.hub;
    const pending: Pending[] = [];
    const add = (
      topic: Topic,
      build: () => Promise<PushMessage | undefined>,
      version?: Pending['version'],
    ) => {
      if (hub.has(topic.key)) pending.push({ topic, message: limit(build), version });
    };

    // tx subscriptions: each tx whose state changed, placed where its change is (else at the end)
    const changedTxs = this.changedTxStates(changes.txVersions);
    const txUpdate = (txId: string) => {
      const version = changedTxs.get(txId);
      if (version === undefined) return;
      changedTxs.delete(txId);
      const topic = transactionTopic(txId);
      add(topic, async () => messageOf(topic, await transactionPayload(ask, txId)), { txId, version });
    };
    // a tx changed twice in a round (received, then dropped) is pushed once, as it is at the end
    const mempoolPushed = new Set<string>();
    const mempoolTx = (txId: string) =>
      !mempoolPushed.has(txId) &&
      mempoolPushed.add(txId) &&
      add(mempoolTopic, async () => {
        const text = await transactionPayload(ask, txId);
        // a tx mined since is no mempool event: its update goes to its own topic
        return text !== undefined && isMempoolTx(text) ? plainMessage(mempoolTopic, text) : undefined;
      });

    const principals = [
      ...new Set(
        [...hub.topicsOf('address-transaction'), ...hub.topicsOf('address-stx-balance')].map(principalOf),
      ),
    ];
    const touched = await principalTxsInBlocks(
      this.store.sql,
      [...changes.orphaned, ...changes.blocks].map((b) => b.index_block_hash),
      principals,
    );
    const wantsNft =
      hub.has(nftEventTopic.key) ||
      hub.topicsOf('nft-asset-event').length > 0 ||
      hub.topicsOf('nft-collection-event').length > 0;
    const nftEvents = wantsNft
      ? await nftEventsInBlocks(
          this.store.sql,
          changes.blocks.map((b) => b.index_block_hash),
        )
      : [];

    const balances = (block: PushBlock) => {
      const seen = new Set<string>();
      for (const row of touched) {
        if (row.index_block_hash !== block.index_block_hash || seen.has(row.principal)) continue;
        seen.add(row.principal);
        const topic = addressBalanceTopic(row.principal);
        add(topic, async () => {
          const text = await addressBalancePayload(ask, row.principal);
          return text === undefined ? undefined : addressBalanceMessage(topic as never, text);
        });
      }
    };

    // a fork switch: the txs of the blocks that left the chain (most are back in the mempool)
    for (const block of changes.orphaned) {
      for (const txId of block.tx_ids) {
        txUpdate(txId);
        mempoolTx(txId);
      }
      balances(block);
    }

    const microblocksOn = (anchor: string) => {
      for (const m of changes.microblocks) {
        if (m.parent_index_block_hash !== anchor) continue;
        add(microblockTopic, async () =>
          messageOf(microblockTopic, await microblockPayload(ask, m.microblock_hash)),
        );
      }
    };
    let nextMempool = 0;
    const mempoolUntil = (messageId: number) => {
      for (; nextMempool < changes.mempool.length; nextMempool++) {
        const change: MempoolChange = changes.mempool[nextMempool];
        if (change.message_id > messageId) return;
        for (const txId of [...change.added, ...change.dropped]) {
          mempoolTx(txId);
          txUpdate(txId);
        }
      }
    };

    const first = changes.blocks[0];
    if (changes.orphaned.length === 0 && first) microblocksOn(first.parent_index_block_hash);
    if (changes.blocks.length === 0) microblocksOn(changes.cursor.tip.index_block_hash);
    for (const block of changes.blocks) {
      if (block.message_id !== null) mempoolUntil(block.message_id - 1);
      add(blockTopic, async () => messageOf(blockTopic, await blockPayload(ask, block.block_hash)));
      for (const txId of block.tx_ids) txUpdate(txId);
      for (const row of touched) {
        if (row.index_block_hash !== block.index_block_hash) continue;
        const topic = addressTransactionTopic(row.principal);
        add(topic, async () => {
          const text = await addressTransactionPayload(ask, row.principal, row.tx_id);
          return text === undefined ? undefined : addressTransactionMessage(topic as never, text);
        });
      }
      balances(block);
      for (const event of nftEvents) {
        if (event.index_block_hash !== block.index_block_hash) continue;
        const payload = () => nftEventPayload(ask, event.tx_id, event.event_index);
        const asset = nftAssetTopic(event.asset_identifier, event.value.toLowerCase());
        const collection = nftCollectionTopic(event.asset_identifier);
        add(nftEventTopic, async () => messageOf(nftEventTopic, await payload()));
        add(asset, async () => nftMessageOf(asset, await payload()));
        add(collection, async () => nftMessageOf(collection, await payload()));
      }
      microblocksOn(block.index_block_hash);
    }
    mempoolUntil(Number.MAX_SAFE_INTEGER);
    for (const txId of [...changedTxs.keys()]) txUpdate(txId);
    return pending;
  }

  /** The subscribed txs whose state is not the one last pushed, with their state now. */
  private changedTxStates(now: Map<string, string | null>): Map<string, string | null> {
    const changed = new Map<string, string | null>();
    for (const [id, pushed] of this.txStates) {
      const version = now.get(id) ?? null;
      if (version !== pushed) changed.set(id, version);
    }
    return changed;
  }
}

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
