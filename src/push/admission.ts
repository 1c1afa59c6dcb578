import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { clientNetwork } from '../api/plugins/access-control.js';
import type { PushCounters } from '../metrics.js';

// Who may open a push connection, decided once per connection, by the API's own access control: the
// WebSocket upgrade (or the socket.io handshake) is put to the API as a request of its path, with the
// client's address and headers (X-API-Key, X-Forwarded-For from a trusted proxy), so a key is verified, a
// missing one refused when keys are required, and the request counted against the client's rate limit,
// exactly as an HTTP request would be (src/api/plugins/access-control.ts is the one rule). Then each client
// holds a bounded number of open connections: per API key whatever its IP, else per client IP (an IPv6 /64),
// both channels together.

/** The path of the WebSocket JSON-RPC channel, and of the API route that admits its connections. */
export const WS_PATH = '/extended/v1/ws';

export interface ConnectionBudgets {
  perIp: number;
  perKey: number;
}

/** An admitted client: whom its connections count against. */
export interface PushClient {
  /** `key:<id>` for a valid API key, else `ip:<network>` */
  id: string;
  keyed: boolean;
}

export type Verdict =
  | { ok: true; client: PushClient }
  | { ok: false; statusCode: number; headers: Record<string, string>; body: string; message: string };

export class Admission {
  /** marks the in-process admission request (an outside client cannot know it) */
  readonly token = randomBytes(16).toString('hex');
  private readonly open = new Map<string, number>();

  constructor(
    private readonly app: FastifyInstance,
    private readonly budgets: ConnectionBudgets,
    private readonly counters: PushCounters,
  ) {}

  /** Whether the client of an upgrade or handshake request may connect (access control, then its budget). */
  async check(req: IncomingMessage): Promise<Verdict> {
    const headers: Record<string, string> = { 'x-push-admission': this.token };
    for (const name of ['x-api-key', 'x-forwarded-for', 'origin', 'user-agent']) {
      const value = req.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    const res = await this.app.inject({
      method: 'GET',
      url: WS_PATH,
      headers,
      remoteAddress: req.socket.remoteAddress ?? '',
    });
    if (res.statusCode !== 200) {
      const passOn: Record<string, string> = {};
      for (const name of ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'retry-after']) {
        const value = res.headers[name];
        if (value !== undefined) passOn[name] = String(value);
      }
      const message = (JSON.parse(res.body) as { message?: string }).message ?? res.statusMessage;
      return { ok: false, statusCode: res.statusCode, headers: passOn, body: res.body, message };
    }
    const client = JSON.parse(res.body) as PushClient;
    const over = this.overBudget(client);
    return over ? { ok: false, statusCode: 429, headers: {}, ...tooMany(over) } : { ok: true, client };
  }

  /** The admission route's answer to the in-process request: who the client is. */
  identify(request: { apiKey?: { id: string } | null; ip: string }): PushClient {
    return request.apiKey
      ? { id: `key:${request.apiKey.id}`, keyed: true }
      : { id: `ip:${clientNetwork(request.ip)}`, keyed: false };
  }

  /**
   * Counts a connection against its client's budget; false (and nothing counted) when that is spent (two
   * connections admitted at once may both have passed `check`). `release` when it closes.
   */
  acquire(client: PushClient): boolean {
    if (this.overBudget(client)) return false;
    this.open.set(client.id, (this.open.get(client.id) ?? 0) + 1);
    return true;
  }

  release(client: PushClient): void {
    const left = (this.open.get(client.id) ?? 1) - 1;
    if (left <= 0) this.open.delete(client.id);
    else this.open.set(client.id, left);
  }

  private overBudget(client: PushClient): string | undefined {
    const budget = client.keyed ? this.budgets.perKey : this.budgets.perIp;
    if ((this.open.get(client.id) ?? 0) < budget) return undefined;
    this.counters.add(this.counters.refused, client.keyed ? 'per_key' : 'per_ip');
    return client.keyed
      ? `at most ${budget} live-push connections per API key (PUSH_MAX_CONNECTIONS_PER_KEY) are open`
      : `at most ${budget} live-push connections per IP address without an API key (PUSH_MAX_CONNECTIONS_PER_IP) are open`;
  }
}

function tooMany(message: string) {
  const body = JSON.stringify({ statusCode: 429, error: 'Too Many Requests', message });
  return { body, message };
}
