import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import {
  cachedChainState,
  CHAIN_STATE_TTL_MS,
  chainStateOutdated,
  onChainStateChange,
} from '../store/read/chain-state.js';
import { readChangesSince, readPushCursor, txVersions, type PushCursor } from '../store/read/push.js';
import type { Store } from '../store/store.js';
import type { Hub, HubListener } from './hub.js';
import { RoundPlan } from './round-plan.js';
import type { Topic } from './topics.js';

// The feed: after each change ingest commits, what it changed, as events in chain order (round-plan.ts), to
// the hub.
//
// It wakes on the chain state's announcements (this process's ingest, or another's NOTIFY:
// store/read/chain-state.ts) and, for a replica that hears none, on a look at the cached chain state every
// CHAIN_STATE_TTL_MS. A round reads what changed since the last one (store/read/push.ts: the blocks that left
// and joined the canonical chain, microblocks, a micro-fork's orphaned stream, mempool messages) and turns it
// into events, each placed where its change is in the chain: the txs a fork switch or a micro-fork orphaned,
// then each new block with its txs' events and the microblocks built on it (each with its txs' address
// events), mempool changes between them in commit order. A tx subscription compares the tx's state (store/read/push.ts `txVersions`) with the one
// last pushed, so it hears of every change, whatever made it. Rounds run one at a time; nothing is read
// while nobody subscribes.

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
    const plan = new RoundPlan(this.app, this.hub, changes, this.changedTxStates(changes.txVersions));
    const pending = await plan.build(this.store.sql);
    this.cursor = changes.cursor;
    for (const { message, version } of pending) {
      const ready = await message;
      if (version) this.txStates.set(version.txId, version.version);
      if (ready) this.hub.deliver(ready);
    }
    return changes.complete;
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
