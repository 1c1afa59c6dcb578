import type { PushCounters } from '../metrics.js';
import type { PushMessage } from './messages.js';
import type { Topic, TopicKind } from './topics.js';

// Who is subscribed to what, for both channels: the one registry the feed asks ("does anyone want this
// topic?") before it reads or renders anything, and the one place a message is handed to each subscriber,
// where a client too far behind is dropped instead of buffered without bound.

export type ChannelName = 'websocket' | 'socket.io';
export type DropReason = 'slow' | 'unresponsive';

/** One client connection of either channel. */
export abstract class Connection {
  /** topic key → the topic name as this client spelled it (socket.io event names echo the client's) */
  readonly topics = new Map<string, string>();
  abstract readonly channel: ChannelName;
  /** bytes waiting to be sent to the client */
  abstract backlog(): number;
  abstract write(message: PushMessage, spelled: string): void;
  /** closes the connection (the channel then calls `Hub.disconnected`) */
  abstract close(reason: DropReason | 'shutdown'): void;
}

/** A subscription refused: the message says why, for the client. */
export class SubscriptionError extends Error {}

export interface HubLimits {
  maxSubscriptions: number;
  maxBufferedBytes: number;
}

export interface HubListener {
  /** a topic got its first subscriber: resolved once the feed has read what it compares against */
  watch(topic: Topic): Promise<void>;
  /** a topic lost its last subscriber */
  unwatch(topic: Topic): void;
}

export class Hub {
  private readonly subscribers = new Map<string, { topic: Topic; connections: Set<Connection> }>();
  private listener: HubListener | undefined;

  constructor(
    private readonly limits: HubLimits,
    private readonly counters: PushCounters,
  ) {}

  listen(listener: HubListener) {
    this.listener = listener;
  }

  /** Subscribes `connection` to `topic` (spelled `spelled` by the client); a repeat is a no-op. */
  async subscribe(connection: Connection, topic: Topic, spelled = topic.key): Promise<void> {
    if (connection.topics.has(topic.key)) return;
    if (connection.topics.size >= this.limits.maxSubscriptions) {
      throw new SubscriptionError(
        `a connection may hold at most ${this.limits.maxSubscriptions} subscriptions (PUSH_MAX_SUBSCRIPTIONS)`,
      );
    }
    connection.topics.set(topic.key, spelled);
    let entry = this.subscribers.get(topic.key);
    const first = !entry;
    if (!entry) {
      entry = { topic, connections: new Set() };
      this.subscribers.set(topic.key, entry);
    }
    entry.connections.add(connection);
    this.counters.add(this.counters.subscriptions, topic.kind);
    if (!first) return;
    try {
      await this.listener?.watch(topic);
    } catch (err) {
      this.unsubscribe(connection, topic.key);
      throw err;
    }
  }

  unsubscribe(connection: Connection, key: string): void {
    if (!connection.topics.delete(key)) return;
    const entry = this.subscribers.get(key);
    if (!entry) return;
    entry.connections.delete(connection);
    this.counters.add(this.counters.subscriptions, entry.topic.kind, -1);
    if (entry.connections.size === 0) {
      this.subscribers.delete(key);
      this.listener?.unwatch(entry.topic);
    }
  }

  /** A connection closed: its subscriptions go. */
  disconnected(connection: Connection): void {
    for (const key of [...connection.topics.keys()]) this.unsubscribe(connection, key);
  }

  has(key: string): boolean {
    return this.subscribers.has(key);
  }

  isEmpty(): boolean {
    return this.subscribers.size === 0;
  }

  /** The subscribed topics of a kind. */
  topicsOf(kind: TopicKind): Topic[] {
    const found: Topic[] = [];
    for (const { topic } of this.subscribers.values()) if (topic.kind === kind) found.push(topic);
    return found;
  }

  /** Hands `message` to every subscriber of its topic; a subscriber too far behind is dropped instead. */
  deliver(message: PushMessage): void {
    const entry = this.subscribers.get(message.topic.key);
    if (!entry) return;
    for (const connection of [...entry.connections]) {
      if (connection.backlog() > this.limits.maxBufferedBytes) {
        this.counters.add(this.counters.drops, 'slow');
        // its subscriptions go now: the close completes once the socket is gone
        this.disconnected(connection);
        connection.close('slow');
        continue;
      }
      connection.write(message, connection.topics.get(message.topic.key) ?? message.topic.key);
      this.counters.add(this.counters.messages, `${connection.channel} ${message.topic.kind}`);
    }
  }
}
