import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.js';
import { pushCounters as processCounters, type PushCounters } from '../metrics.js';
import type { Store } from '../store/store.js';
import { Admission, WS_PATH, type Verdict } from './admission.js';
import { PushFeed } from './feed.js';
import { Hub } from './hub.js';
import { JsonRpcChannel } from './json-rpc-channel.js';
import { SocketIoChannel } from './socket-io-channel.js';

// Live push: what changes in the index, sent as it is committed to the clients subscribed to it, over two
// channels on the API's port: WebSocket JSON-RPC at /extended/v1/ws and socket.io at /socket.io/ (the two the
// original API serves and its official client speaks). The feed (feed.ts) finds what changed, the hub (hub.ts)
// holds the subscriptions and hands each message to its subscribers, the channels speak the protocols, the
// admission (admission.ts) lets clients in under the API's access control and their connection budgets.

export interface PushLimits {
  maxConnectionsPerIp: number;
  maxConnectionsPerKey: number;
  maxSubscriptions: number;
  maxMessageBytes: number;
  maxBufferedBytes: number;
  pingIntervalMs: number;
}

export function pushLimitsFromConfig(config: Config): PushLimits {
  return {
    maxConnectionsPerIp: config.PUSH_MAX_CONNECTIONS_PER_IP,
    maxConnectionsPerKey: config.PUSH_MAX_CONNECTIONS_PER_KEY,
    maxSubscriptions: config.PUSH_MAX_SUBSCRIPTIONS,
    maxMessageBytes: config.PUSH_MAX_MESSAGE_BYTES,
    maxBufferedBytes: config.PUSH_MAX_BUFFERED_KB * 1024,
    pingIntervalMs: config.PUSH_PING_INTERVAL_MS,
  };
}

export interface PushOptions {
  store: Store;
  limits: PushLimits;
  /** where connections, subscriptions, messages and drops are counted (default: the process's) */
  counters?: PushCounters;
}

/** The answer to a request on a path that takes no upgrade, or an upgrade refused, written on its socket. */
function refuse(socket: Duplex, statusCode: number, headers: Record<string, string>, body: string) {
  const status = `${statusCode} ${STATUS_TEXT[statusCode] ?? 'Error'}`;
  const lines = Object.entries({
    ...headers,
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(body)),
    connection: 'close',
  }).map(([name, value]) => `${name}: ${value}`);
  socket.end(`HTTP/1.1 ${status}\r\n${lines.join('\r\n')}\r\n\r\n${body}`);
}

const STATUS_TEXT: Record<number, string> = {
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  429: 'Too Many Requests',
  503: 'Service Unavailable',
};

/** Serves live push on `app`'s server (registered before it listens). */
export async function registerPush(app: FastifyInstance, options: PushOptions): Promise<void> {
  const { limits } = options;
  const counters = options.counters ?? processCounters;
  const hub = new Hub(
    { maxSubscriptions: limits.maxSubscriptions, maxBufferedBytes: limits.maxBufferedBytes },
    counters,
  );
  const admission = new Admission(
    app,
    { perIp: limits.maxConnectionsPerIp, perKey: limits.maxConnectionsPerKey },
    counters,
  );

  // The channel's path, for a plain HTTP request, and the admission of its upgrades (put through access
  // control as a request of this route, marked by the admission's token).
  app.get(
    WS_PATH,
    {
      // not an HTTP operation: the channels are described in the README (Live push)
      schema: { hide: true },
    },
    async (request, reply) => {
      if (request.headers['x-push-admission'] === admission.token) return admission.identify(request);
      return reply
        .code(426)
        .header('upgrade', 'websocket')
        .send({
          statusCode: 426,
          error: 'Upgrade Required',
          message: `${WS_PATH} takes WebSocket connections (JSON-RPC 2.0 subscriptions), not plain requests`,
        });
    },
  );

  const rpc = new JsonRpcChannel(hub, admission, counters, limits);
  const io = new SocketIoChannel(app.server, hub, admission, counters, limits);
  const feed = new PushFeed(app, options.store, hub, app.log);

  app.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = (req.url ?? '').split('?')[0].replace(/\/+$/, '');
    if (path.startsWith('/socket.io')) return; // socket.io's
    if (path !== WS_PATH) {
      const message = `${req.url ?? ''} takes no WebSocket connections (live push: ${WS_PATH}, or socket.io at /socket.io/)`;
      return refuse(socket, 404, {}, JSON.stringify({ statusCode: 404, error: 'Not Found', message }));
    }
    socket.on('error', () => socket.destroy());
    admission.check(req).then(
      (verdict: Verdict) => {
        if (!verdict.ok) return refuse(socket, verdict.statusCode, verdict.headers, verdict.body);
        rpc.accept(req, socket, head, verdict.client);
      },
      () => {
        const message = 'the connection could not be admitted; try again';
        refuse(socket, 503, {}, JSON.stringify({ statusCode: 503, error: 'Service Unavailable', message }));
      },
    );
  });

  // Push connections outlive requests: closed before the server waits for its connections to end.
  app.addHook('preClose', async () => {
    rpc.close();
    io.close();
    await feed.close();
  });
}
