import type { Server as HttpServer } from 'node:http';
import { Server, type Socket } from 'socket.io';
import type { PushCounters } from '../metrics.js';
import type { Admission, PushClient } from './admission.js';
import { Connection, SubscriptionError, type DropReason, type Hub } from './hub.js';
import type { PushMessage } from './messages.js';
import { topicOfName, TopicError, type Topic } from './topics.js';

// The socket.io channel at /socket.io/, as the official client's `StacksApiSocketClient` speaks it: topics
// are given in the handshake's `subscriptions` query (comma-separated) and by `subscribe` (a topic or a list,
// with an acknowledgement: null, or why it was refused) and `unsubscribe` events; each event is emitted under
// the topic's name as the client spelled it. Both transports (websocket, and long-polling for browsers that
// cannot) are served; each connection is admitted by the API's access control (admission.ts).

const TOO_MANY = 'too many live-push connections for this client; close one first';

export interface IoChannelOptions {
  maxMessageBytes: number;
  pingIntervalMs: number;
  maxSubscriptions: number;
}

/** engine.io's connection, with what it buffers read (fields it keeps private; read, never written). */
interface EngineConnection {
  write(data: string): unknown;
  writeBuffer?: { data?: unknown }[];
  transport?: { socket?: { bufferedAmount?: number; terminate?(): void } };
}

class IoConnection extends Connection {
  readonly channel = 'socket.io' as const;

  constructor(readonly socket: Socket) {
    super();
  }

  private get engine(): EngineConnection {
    return this.socket.conn as unknown as EngineConnection;
  }

  backlog(): number {
    const { writeBuffer = [], transport } = this.engine;
    let bytes = transport?.socket?.bufferedAmount ?? 0;
    for (const packet of writeBuffer) bytes += typeof packet.data === 'string' ? packet.data.length : 0;
    return bytes;
  }

  write(message: PushMessage, spelled: string): void {
    this.engine.write(message.ioPacket(spelled));
  }

  close(reason: DropReason | 'shutdown'): void {
    this.socket.disconnect(true);
    // a slow client's WebSocket is cut, not closed: its close would wait behind what it does not read
    if (reason !== 'shutdown') this.engine.transport?.socket?.terminate?.();
  }
}

/** The handshake's `subscriptions` query as topics (a topic named twice counts once). */
function handshakeTopics(query: unknown): { name: string; topic: Topic }[] {
  const given = [query].flat().filter((v): v is string => typeof v === 'string' && v !== '');
  const names = [...new Set(given.flatMap((v) => v.split(',')).filter((n) => n !== ''))];
  return names.map((name) => ({ name, topic: topicOfName(name) }));
}

export class SocketIoChannel {
  private readonly io: Server;
  /** the client each admitted connection counts against */
  private readonly clients = new WeakMap<Socket, PushClient>();

  constructor(
    server: HttpServer,
    private readonly hub: Hub,
    private readonly admission: Admission,
    private readonly counters: PushCounters,
    options: IoChannelOptions,
  ) {
    this.io = new Server(server, {
      serveClient: false,
      // upgrades of other paths are this process's (the JSON-RPC channel) or refused by it, never cut here
      destroyUpgrade: false,
      cors: { origin: '*' },
      pingInterval: options.pingIntervalMs,
      pingTimeout: options.pingIntervalMs,
      maxHttpBufferSize: options.maxMessageBytes,
    });
    this.io.use((socket, next) => {
      try {
        const topics = handshakeTopics(socket.handshake.query.subscriptions);
        if (topics.length > options.maxSubscriptions) {
          throw new SubscriptionError(
            `a connection may hold at most ${options.maxSubscriptions} subscriptions (PUSH_MAX_SUBSCRIPTIONS)`,
          );
        }
      } catch (err) {
        return next(new Error((err as Error).message));
      }
      // admitted here rather than in engine.io's allowRequest: a refusal there reaches a websocket client as
      // a bare "websocket error", one here as a connect_error carrying the message
      this.admission.check(socket.request).then(
        (verdict) => {
          if (!verdict.ok) return next(new Error(verdict.message));
          if (!this.admission.acquire(verdict.client)) return next(new Error(TOO_MANY));
          this.clients.set(socket, verdict.client);
          next();
        },
        () => next(new Error('the connection could not be admitted; try again')),
      );
    });
    this.io.on('connection', (socket) => void this.connected(socket));
  }

  private async connected(socket: Socket): Promise<void> {
    const client = this.clients.get(socket)!;
    const connection = new IoConnection(socket);
    this.counters.add(this.counters.connections, 'socket.io');
    socket.on('disconnect', (reason) => {
      if (reason === 'ping timeout') this.counters.add(this.counters.drops, 'unresponsive');
      this.counters.add(this.counters.connections, 'socket.io', -1);
      this.hub.disconnected(connection);
      this.admission.release(client);
    });
    socket.on('subscribe', async (given: unknown, callback?: unknown) => {
      const reply = typeof callback === 'function' ? (callback as (error: string | null) => void) : () => {};
      try {
        for (const name of [given].flat())
          await this.hub.subscribe(connection, topicOfName(name), name as string);
        reply(null);
      } catch (err) {
        reply(
          err instanceof TopicError || err instanceof SubscriptionError
            ? err.message
            : 'the subscription could not be made; try again',
        );
      }
    });
    socket.on('unsubscribe', (...names: unknown[]) => {
      for (const name of names) {
        try {
          this.hub.unsubscribe(connection, topicOfName(name).key);
        } catch {
          // not a topic: nothing to leave
        }
      }
    });
    for (const { name, topic } of handshakeTopics(socket.handshake.query.subscriptions)) {
      await this.hub.subscribe(connection, topic, name).catch(() => {});
    }
  }

  /** Disconnects every client, without closing the HTTP server (the API's, closed by Fastify). */
  close(): void {
    this.io.disconnectSockets(true);
    this.io.engine.close();
  }
}
