import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics, type Metric } from 'prom-client';
import { countMempool, getIngestStatus, ingestLagBlocks } from './store/read/status.js';
import type { Store } from './store/store.js';

// Prometheus metrics of one process. The request path only touches plain arrays (RequestMetrics): prom-client's
// own histogram costs about 1.3 µs per observation (label hashing and validation), the arrays about 20 ns;
// the text format is built from them when Prometheus scrapes. Chain gauges are read from the database at
// scrape time, never on a request.

/**
 * Counters of the access-control layer, for the metrics endpoint to publish. One process-wide instance
 * (`accessCounters`) is used unless a server is given its own (tests do, to count in isolation).
 */
export class AccessCounters {
  /** Requests served without a rate-limit decision because the counter store (Redis) failed: fail open. */
  rateLimitStoreErrors = 0;
  /** Requests refused by the access-control layer, by status: 401 no key, 403 bad key, 429 over the limit. */
  readonly rejected = { 401: 0, 403: 0, 429: 0 };
  /** Requests admitted, by client class. */
  readonly admitted = { anonymous: 0, keyed: 0 };
}

export const accessCounters = new AccessCounters();

/**
 * Counters of live push (src/push): open connections per channel, subscriptions per topic kind, messages
 * sent, connections dropped and refused. Labels are bounded: channel, topic kind, reason.
 */
export class PushCounters {
  readonly connections = new Map<string, number>();
  readonly subscriptions = new Map<string, number>();
  /** by `<channel> <topic kind>` */
  readonly messages = new Map<string, number>();
  /** connections closed by the server: `slow` (its backlog over the bound), `unresponsive` (no pong) */
  readonly drops = new Map<string, number>();
  /** connections refused over a budget: `per_ip` (anonymous), `per_key` */
  readonly refused = new Map<string, number>();

  add(counts: Map<string, number>, label: string, by = 1) {
    counts.set(label, (counts.get(label) ?? 0) + by);
  }
}

export const pushCounters = new PushCounters();

const PREFIX = 'stacks_api_';

/** Request latency buckets, in seconds: most answers take about a millisecond. */
const HTTP_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
/** Observer message buckets, in seconds: from a mempool tx to a large block with a reorg. */
const INGEST_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

interface Series {
  labels: Record<string, string>;
  /** Observations per bucket (not cumulative), the last slot for those above every bound. */
  counts: Float64Array;
  sum: number;
  count: number;
}

interface MetricValue {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

/** A metric object as prom-client's Registry reads it: `get()` gives the values to print. */
interface CustomMetric {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  aggregator: 'sum';
  get(): Promise<{ name: string; help: string; type: string; aggregator: 'sum'; values: MetricValue[] }>;
  reset(): void;
}

/** Request counts and latencies per (method, route, status), published as a counter and a histogram. */
export class RequestMetrics {
  private readonly series = new Map<string, Series>();

  constructor(private readonly buckets: readonly number[] = HTTP_BUCKETS) {}

  /** `route` is the route pattern (`/extended/v1/tx/:tx_id`), never the raw URL: bounded label values. */
  observe(method: string, route: string, statusCode: number, seconds: number) {
    const key = `${statusCode} ${method} ${route}`;
    let series = this.series.get(key);
    if (series === undefined) {
      series = {
        labels: { method, route, status_code: String(statusCode) },
        counts: new Float64Array(this.buckets.length + 1),
        sum: 0,
        count: 0,
      };
      this.series.set(key, series);
    }
    const buckets = this.buckets;
    let i = 0;
    while (i < buckets.length && seconds > buckets[i]) i++;
    series.counts[i]++;
    series.sum += seconds;
    series.count++;
  }

  /** Requests seen for a route (all methods and statuses), for tests and logs. */
  total(route?: string): number {
    let n = 0;
    for (const s of this.series.values()) if (route === undefined || s.labels.route === route) n += s.count;
    return n;
  }

  register(registry: Registry) {
    const series = this.series;
    const buckets = this.buckets;
    const counter: CustomMetric = {
      name: `${PREFIX}http_requests_total`,
      help: 'Read API requests answered, by method, route pattern and status code',
      type: 'counter',
      aggregator: 'sum',
      async get() {
        const values = [...series.values()].map((s) => ({ labels: s.labels, value: s.count }));
        return { name: this.name, help: this.help, type: this.type, aggregator: 'sum', values };
      },
      reset: () => series.clear(),
    };
    const histogram: CustomMetric = {
      name: `${PREFIX}http_request_duration_seconds`,
      help: 'Read API request latency in seconds (routing to response sent), by method, route and status',
      type: 'histogram',
      aggregator: 'sum',
      async get() {
        const values: MetricValue[] = [];
        for (const s of series.values()) {
          let cumulative = 0;
          buckets.forEach((bound, i) => {
            cumulative += s.counts[i];
            values.push({
              labels: { ...s.labels, le: bound },
              value: cumulative,
              metricName: `${this.name}_bucket`,
            });
          });
          values.push({
            labels: { ...s.labels, le: '+Inf' },
            value: s.count,
            metricName: `${this.name}_bucket`,
          });
          values.push({ labels: s.labels, value: s.sum, metricName: `${this.name}_sum` });
          values.push({ labels: s.labels, value: s.count, metricName: `${this.name}_count` });
        }
        return { name: this.name, help: this.help, type: this.type, aggregator: 'sum', values };
      },
      reset: () => series.clear(),
    };
    registry.registerMetric(counter as unknown as Metric);
    registry.registerMetric(histogram as unknown as Metric);
  }
}

export type IngestOutcome = 'applied' | 'duplicate' | 'reannounced' | 'skipped' | 'invalid' | 'failed';

export interface ServiceMetricsOptions {
  /** Where the chain gauges (tip, mempool, ingest lag) are read at scrape time; none without. */
  store?: Store;
  /** The access-control counters to publish (rejections by status, rate-limit store failures). */
  accessCounters?: AccessCounters;
  /** The live-push counters to publish (connections, subscriptions, messages, drops, refusals). */
  pushCounters?: PushCounters;
  /** Process metrics (CPU, memory, event loop, GC): once per process, not in tests. */
  processMetrics?: boolean;
}

/** Every metric of one process, in one registry. */
export class ServiceMetrics {
  readonly registry = new Registry();
  readonly requests = new RequestMetrics();
  private readonly ingestDuration: Histogram<'path' | 'outcome'>;

  constructor(options: ServiceMetricsOptions = {}) {
    const registers = [this.registry];
    this.requests.register(this.registry);
    this.ingestDuration = new Histogram({
      name: `${PREFIX}ingest_message_duration_seconds`,
      help: 'Time to validate and apply one event-observer message (one database transaction), by path and outcome',
      labelNames: ['path', 'outcome'],
      buckets: INGEST_BUCKETS,
      registers,
    });

    if (options.accessCounters) registerAccessCounters(registers, options.accessCounters);
    if (options.pushCounters) registerPushCounters(registers, options.pushCounters);
    if (options.store) registerChainGauges(registers, options.store);
    if (options.processMetrics) collectDefaultMetrics({ register: this.registry });
  }

  /** Called by the ingestor for every message (see IngestorOptions.onMessage). */
  observeIngest(path: string, outcome: IngestOutcome, seconds: number) {
    this.ingestDuration.observe({ path, outcome }, seconds);
  }

  /** The Prometheus text format. */
  text(): Promise<string> {
    return this.registry.metrics();
  }
}

/** The access-control counters, read from `access` at scrape time. */
function registerAccessCounters(registers: Registry[], access: AccessCounters): void {
  new Counter({
    name: `${PREFIX}access_rejected_total`,
    help: 'Read API requests refused by access control: 401 missing key, 403 bad key, 429 over the rate limit',
    labelNames: ['status_code'],
    registers,
    collect() {
      this.reset();
      for (const status of [401, 403, 429] as const)
        this.inc({ status_code: status }, access.rejected[status]);
    },
  });
  new Counter({
    name: `${PREFIX}rate_limit_store_errors_total`,
    help: 'Requests served without a rate-limit decision because the counter store (Redis) failed',
    registers,
    collect() {
      this.reset();
      this.inc(access.rateLimitStoreErrors);
    },
  });
  new Counter({
    name: `${PREFIX}access_admitted_total`,
    help: 'Read API requests admitted by access control, by client class (anonymous or keyed)',
    labelNames: ['client'],
    registers,
    collect() {
      this.reset();
      this.inc({ client: 'anonymous' }, access.admitted.anonymous);
      this.inc({ client: 'keyed' }, access.admitted.keyed);
    },
  });
}

/** The live-push counts, read from `push` at scrape time. */
function registerPushCounters(registers: Registry[], push: PushCounters): void {
  // each series: one label value per key of the map (a counter's key `<channel> <topic>` holds two)
  const labelsOf = (labelNames: string[], key: string) => {
    const values = key.split(' ');
    return Object.fromEntries(labelNames.map((name, i) => [name, values[i]]));
  };
  const gauge = (name: string, help: string, labelNames: string[], counts: Map<string, number>) =>
    new Gauge({
      name: `${PREFIX}${name}`,
      help,
      labelNames,
      registers,
      collect() {
        this.reset();
        for (const [key, value] of counts) this.set(labelsOf(labelNames, key), value);
      },
    });
  const counter = (name: string, help: string, labelNames: string[], counts: Map<string, number>) =>
    new Counter({
      name: `${PREFIX}${name}`,
      help,
      labelNames,
      registers,
      collect() {
        this.reset();
        for (const [key, value] of counts) this.inc(labelsOf(labelNames, key), value);
      },
    });
  gauge(
    'push_connections',
    'Open live-push connections, by channel (websocket, socket.io)',
    ['channel'],
    push.connections,
  );
  gauge('push_subscriptions', 'Live-push subscriptions, by topic kind', ['topic'], push.subscriptions);
  counter(
    'push_messages_total',
    'Live-push messages sent, by channel and topic kind',
    ['channel', 'topic'],
    push.messages,
  );
  counter(
    'push_drops_total',
    'Live-push connections closed by the server: slow (its backlog over PUSH_MAX_BUFFERED_KB), unresponsive (no pong)',
    ['reason'],
    push.drops,
  );
  counter(
    'push_refused_total',
    'Live-push connections refused over a budget: per_ip (anonymous), per_key',
    ['reason'],
    push.refused,
  );
}

/** The chain gauges (tip, mempool, ingest lag), read from `store` at scrape time. */
function registerChainGauges(registers: Registry[], store: Store): void {
  // One scrape reads the chain state once, whichever gauge asks first.
  let pending: Promise<ChainGauges> | undefined;
  const read = () => {
    pending ??= readChainGauges(store).finally(() => (pending = undefined));
    return pending;
  };
  const gauge = (name: string, help: string, pick: (g: ChainGauges) => number | null) =>
    new Gauge({
      name: `${PREFIX}${name}`,
      help,
      registers,
      async collect() {
        const value = pick(await read());
        this.set(value ?? Number.NaN);
      },
    });
  gauge('database_up', '1 when the database answered the last scrape, else 0', (g) => (g.up ? 1 : 0));
  gauge('chain_tip_height', 'Height of the canonical Stacks tip', (g) => g.tipHeight);
  gauge('burn_tip_height', 'Highest burn block announced by the node', (g) => g.burnTipHeight);
  gauge(
    'ingest_lag_blocks',
    'Burn blocks announced past the one holding the Stacks tip (0–1 is normal; growing: blocks are late)',
    (g) => g.lagBlocks,
  );
  gauge(
    'seconds_since_last_observer_message',
    'Seconds since the newest event-observer message was received (database now() minus the writer receive time)',
    (g) => g.secondsSinceLastMessage,
  );
  gauge('mempool_size', 'Pending (not pruned) mempool transactions', (g) => g.mempoolSize);
}

interface ChainGauges {
  up: boolean;
  tipHeight: number | null;
  burnTipHeight: number | null;
  lagBlocks: number | null;
  secondsSinceLastMessage: number | null;
  mempoolSize: number | null;
}

async function readChainGauges(store: Store): Promise<ChainGauges> {
  try {
    const [status, mempoolSize] = await Promise.all([getIngestStatus(store.sql), countMempool(store.sql)]);
    return {
      up: true,
      tipHeight: status.block_height,
      burnTipHeight: status.burn_block_height,
      lagBlocks: ingestLagBlocks(status),
      secondsSinceLastMessage: status.seconds_since_last_message,
      mempoolSize,
    };
  } catch {
    return {
      up: false,
      tipHeight: null,
      burnTipHeight: null,
      lagBlocks: null,
      secondsSinceLastMessage: null,
      mempoolSize: null,
    };
  }
}

/** A plain HTTP server answering `GET /metrics` (and nothing else) on its own port. */
export async function startMetricsServer(
  metrics: ServiceMetrics,
  host: string,
  port: number,
): Promise<{ server: Server; port: number; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' || path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('only GET /metrics here\n');
      return;
    }
    metrics.text().then(
      (body) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(body),
      (err: unknown) =>
        res
          .writeHead(500, { 'content-type': 'text/plain; charset=utf-8' })
          .end(`${(err as Error).message}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    server,
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
