import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import type { PushCounters } from '../metrics.js';
import type { Admission, PushClient } from './admission.js';
import { Connection, SubscriptionError, type DropReason, type Hub } from './hub.js';
import type { PushMessage } from './messages.js';
import { rpcSubscriptionResult, topicOfRpcParams, TopicError } from './topics.js';

// The WebSocket channel at /extended/v1/ws: JSON-RPC 2.0, as the official client's `connectWebSocketClient`
// speaks it. A client sends requests `subscribe` and `unsubscribe` (params `{ event, ...topic parameters }`);
// each gets a response (the topic's parameters as the server reads them, or an error); events come as
// notifications whose method is the event. Batches (an array of requests) get an array of responses;
// notifications from the client are ignored, as the specification says.

const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const METHOD_NOT_FOUND = -32601;
const INVALID_PARAMS = -32602;
const INTERNAL_ERROR = -32603;

type RpcId = string | number | null;

class RpcConnection extends Connection {
  readonly channel = 'websocket' as const;
  /** answered the last ping (or none sent yet) */
  alive = true;

  constructor(readonly socket: WebSocket) {
    super();
  }

  backlog(): number {
    return this.socket.bufferedAmount;
  }

  write(message: PushMessage): void {
    this.socket.send(message.rpcText());
  }

  close(reason: DropReason | 'shutdown'): void {
    // a close frame would wait behind what a slow client does not read, and a silent one never answers it
    if (reason === 'shutdown') this.socket.close(1001, 'server stopping');
    else this.socket.terminate();
  }
}

export interface RpcChannelOptions {
  maxMessageBytes: number;
  pingIntervalMs: number;
}

export class JsonRpcChannel {
  private readonly server: WebSocketServer;
  private readonly connections = new Set<RpcConnection>();
  private readonly pinger: NodeJS.Timeout;

  constructor(
    private readonly hub: Hub,
    private readonly admission: Admission,
    private readonly counters: PushCounters,
    options: RpcChannelOptions,
  ) {
    this.server = new WebSocketServer({ noServer: true, maxPayload: options.maxMessageBytes });
    // a connection that has not answered the previous ping is gone (a dead peer sends no close)
    this.pinger = setInterval(() => {
      for (const connection of this.connections) {
        if (!connection.alive) {
          this.counters.add(this.counters.drops, 'unresponsive');
          connection.close('unresponsive');
          continue;
        }
        connection.alive = false;
        connection.socket.ping();
      }
    }, options.pingIntervalMs);
    this.pinger.unref();
  }

  /** Takes an upgrade request the admission let through. */
  accept(req: IncomingMessage, socket: Duplex, head: Buffer, client: PushClient): void {
    this.server.handleUpgrade(req, socket, head, (ws) => {
      if (!this.admission.acquire(client)) {
        ws.close(1013, 'too many connections for this client');
        return;
      }
      const connection = new RpcConnection(ws);
      this.connections.add(connection);
      this.counters.add(this.counters.connections, 'websocket');
      ws.on('pong', () => (connection.alive = true));
      ws.on('message', (data, isBinary) => this.onMessage(connection, data, isBinary));
      ws.on('error', () => ws.terminate());
      ws.once('close', () => {
        this.connections.delete(connection);
        this.counters.add(this.counters.connections, 'websocket', -1);
        this.hub.disconnected(connection);
        this.admission.release(client);
      });
    });
  }

  /** Closes every connection (going away) and stops pinging. */
  close(): void {
    clearInterval(this.pinger);
    for (const connection of this.connections) connection.close('shutdown');
    // a client that does not answer the close frame is cut after a grace period
    const sockets = [...this.connections].map((c) => c.socket);
    setTimeout(() => sockets.forEach((s) => s.terminate()), 1000).unref();
  }

  private async onMessage(connection: RpcConnection, data: RawData, isBinary: boolean): Promise<void> {
    let parsed: unknown;
    try {
      if (isBinary) throw new Error('binary messages are not JSON-RPC: send text');
      parsed = JSON.parse(data.toString());
    } catch (err) {
      send(connection, failure(null, PARSE_ERROR, `Parse error: ${(err as Error).message}`));
      return;
    }
    if (Array.isArray(parsed)) {
      if (parsed.length === 0) {
        send(connection, failure(null, INVALID_REQUEST, 'Invalid Request: an empty batch'));
        return;
      }
      const answers = (await Promise.all(parsed.map((r) => this.answer(connection, r)))).filter(
        (a): a is object => a !== undefined,
      );
      if (answers.length > 0) send(connection, answers);
      return;
    }
    const answer = await this.answer(connection, parsed);
    if (answer !== undefined) send(connection, answer);
  }

  /** The response to one request (none to a notification). */
  private async answer(connection: RpcConnection, request: unknown): Promise<object | undefined> {
    const r = (typeof request === 'object' && request !== null ? request : {}) as Record<string, unknown>;
    const id = typeof r.id === 'string' || typeof r.id === 'number' ? r.id : null;
    if (r.jsonrpc !== '2.0' || typeof r.method !== 'string') {
      return failure(
        id,
        INVALID_REQUEST,
        'Invalid Request: expected {"jsonrpc": "2.0", "method": ..., "id": ...}',
      );
    }
    if (!('id' in r)) return undefined;
    if (r.method !== 'subscribe' && r.method !== 'unsubscribe') {
      return failure(id, METHOD_NOT_FOUND, `Method not found: ${r.method} (subscribe or unsubscribe)`);
    }
    try {
      const topic = topicOfRpcParams(r.params);
      if (r.method === 'subscribe') await this.hub.subscribe(connection, topic);
      else this.hub.unsubscribe(connection, topic.key);
      return { jsonrpc: '2.0', id, result: rpcSubscriptionResult(topic) };
    } catch (err) {
      if (err instanceof TopicError || err instanceof SubscriptionError) {
        return failure(id, INVALID_PARAMS, `Invalid params: ${err.message}`);
      }
      // the topic's state could not be read (the database down): nothing was subscribed
      return failure(id, INTERNAL_ERROR, 'Internal error: the subscription could not be made; try again');
    }
  }
}

function failure(id: RpcId, code: number, message: string) {
  return { jsonrpc: '2.0', id, error: { code, message } };
}

function send(connection: RpcConnection, answer: unknown) {
  connection.socket.send(JSON.stringify(answer));
}
