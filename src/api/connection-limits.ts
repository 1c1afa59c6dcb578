import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { compile } from '@fastify/proxy-addr';
import type { FastifyBaseLogger } from 'fastify';
import { ConfigError, type Config } from '../config.js';
import { clientNetwork } from './plugins/access-control.js';

// How much of the process one client may hold, on the read API's port. Without bounds, slow connections
// (headers sent a byte at a time, or idle keep-alives) piled up: ~20,000 of them from one host reached the
// process's open-file limit, and then every client was refused, the database connections too. So:
// - time: a client has API_HEADERS_TIMEOUT_MS to send its headers and API_REQUEST_TIMEOUT_MS its whole request
//   (then the connection is closed); an idle keep-alive connection is closed after API_KEEP_ALIVE_TIMEOUT_MS;
// - count: a client IP (an IPv6 /64, as the rate limit counts it) holds at most API_MAX_CONNECTIONS_PER_IP
//   connections, the API at most API_MAX_CONNECTIONS in all (kept below the process's open-file limit, with
//   FILE_RESERVE descriptors left for the database, the observer and files). A connection over a bound is
//   closed as soon as it is accepted, before anything is read from it.
//
// The invariant kept beside the defence: a client within the bounds (fewer connections than the per-IP bound,
// each sending its request within the time bounds) is always served, whatever another host holds; a trusted
// proxy (TRUSTED_PROXIES) carries many clients, so it is bounded by the total only.

export interface ConnectionLimits {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  maxConnections: number;
  maxConnectionsPerIp: number;
}

/** Descriptors left to the rest of the process when the total is lowered to the open-file limit. */
const FILE_RESERVE = 256;

/** How often Node checks the header and request timeouts (its default, 30 s, would let them run 30 s over). */
const TIMEOUT_CHECK_INTERVAL_MS = 1000;

export function connectionLimitsFromConfig(config: Config): ConnectionLimits {
  if (config.API_HEADERS_TIMEOUT_MS > config.API_REQUEST_TIMEOUT_MS) {
    throw new ConfigError(
      `API_HEADERS_TIMEOUT_MS (${config.API_HEADERS_TIMEOUT_MS}) must not exceed API_REQUEST_TIMEOUT_MS (${config.API_REQUEST_TIMEOUT_MS})`,
    );
  }
  return {
    headersTimeoutMs: config.API_HEADERS_TIMEOUT_MS,
    requestTimeoutMs: config.API_REQUEST_TIMEOUT_MS,
    keepAliveTimeoutMs: config.API_KEEP_ALIVE_TIMEOUT_MS,
    maxConnections: config.API_MAX_CONNECTIONS,
    maxConnectionsPerIp: config.API_MAX_CONNECTIONS_PER_IP,
  };
}

/** Fastify's server options for the time bounds. */
export function timeBoundOptions(limits: ConnectionLimits) {
  return {
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    http: {
      headersTimeout: limits.headersTimeoutMs,
      connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS,
    },
  };
}

/** The soft limit on open files of this process (Linux: /proc/self/limits); undefined when unknown. */
function openFileLimit(): number | undefined {
  try {
    const line = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    return line ? Number(line[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** API_MAX_CONNECTIONS, lowered below the open-file limit (with a warning) when it would not fit. */
function connectionTotal(limits: ConnectionLimits, log: FastifyBaseLogger, fileLimit = openFileLimit()) {
  if (fileLimit === undefined || limits.maxConnections + FILE_RESERVE <= fileLimit)
    return limits.maxConnections;
  const total = Math.max(1, fileLimit - FILE_RESERVE);
  log.warn(
    { API_MAX_CONNECTIONS: limits.maxConnections, openFileLimit: fileLimit, maxConnections: total },
    `API_MAX_CONNECTIONS=${limits.maxConnections} does not fit the process's open-file limit (${fileLimit}, ` +
      `${FILE_RESERVE} kept for the database and files): at most ${total} connections; raise the limit ` +
      '(ulimit -n, systemd LimitNOFILE) to allow more',
  );
  return total;
}

/**
 * Bounds the connections `server` keeps open: per client network (trusted proxies excepted) and in all.
 * Refusals are logged at once, then at most once every 10 s, with their counts.
 */
export function limitConnections(
  server: Server,
  limits: ConnectionLimits,
  trustedProxies: string[],
  log: FastifyBaseLogger,
): void {
  server.maxConnections = connectionTotal(limits, log);
  const trusted = trustedProxies.length > 0 ? compile(trustedProxies) : () => false;
  const open = new Map<string, number>();
  const refused = { perIp: 0, total: 0, since: 0 };
  const report = () => {
    if (Date.now() - refused.since < 10_000) return;
    log.warn(
      { overPerIpLimit: refused.perIp, overTotalLimit: refused.total },
      'connections refused: over API_MAX_CONNECTIONS_PER_IP or API_MAX_CONNECTIONS',
    );
    Object.assign(refused, { perIp: 0, total: 0, since: Date.now() });
  };
  server.on('drop', () => {
    refused.total += 1;
    report();
  });
  server.on('connection', (socket) => {
    const address = socket.remoteAddress;
    if (address === undefined || trusted(address, 0)) return;
    const client = clientNetwork(address);
    const count = (open.get(client) ?? 0) + 1;
    if (count > limits.maxConnectionsPerIp) {
      socket.destroy();
      refused.perIp += 1;
      report();
      return;
    }
    open.set(client, count);
    socket.once('close', () => {
      const left = open.get(client)! - 1;
      if (left === 0) open.delete(client);
      else open.set(client, left);
    });
  });
}
