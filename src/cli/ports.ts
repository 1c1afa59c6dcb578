import { createServer } from 'node:net';
import type { Config } from '../config.js';
import { OperatorError } from '../errors.js';

// The ports a run mode listens on, checked free and distinct at start-up, before the database is opened or
// the demo chain indexed: a port in use is then a one-line error naming its variable, not a raw
// EADDRINUSE stack a minute later.

export type ServeMode = 'both' | 'read-only' | 'write-only';

/** Where a server listens, and the variable that sets its port. */
export interface ServerAddress {
  /** the variable that sets the port (the host's is `*_HOST`) */
  variable: 'API_PORT' | 'OBSERVER_PORT' | 'METRICS_PORT';
  host: string;
  port: number;
}

/** The servers a mode opens: the observer unless read-only, the API unless write-only, metrics when enabled. */
export function serverAddressesOf(config: Config, mode: ServeMode): ServerAddress[] {
  const addresses: ServerAddress[] = [];
  if (mode !== 'read-only')
    addresses.push({ variable: 'OBSERVER_PORT', host: config.OBSERVER_HOST, port: config.OBSERVER_PORT });
  if (mode !== 'write-only')
    addresses.push({ variable: 'API_PORT', host: config.API_HOST, port: config.API_PORT });
  if (config.METRICS_ENABLED)
    addresses.push({ variable: 'METRICS_PORT', host: config.METRICS_HOST, port: config.METRICS_PORT });
  return addresses;
}

/** @internal exported for its tests */
export class PortError extends OperatorError {}

/** The one-line error for a server that cannot listen, naming its variable. */
export function portError(address: ServerAddress, err: NodeJS.ErrnoException): PortError {
  const where = `${address.host}:${address.port}`;
  switch (err.code) {
    case 'EADDRINUSE':
      return new PortError(inUse([address]));
    case 'EACCES':
      return new PortError(
        `${address.variable}=${address.port}: not allowed to listen on ${where} (ports below 1024 need privileges)`,
      );
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
      return new PortError(
        `${address.variable.replace('_PORT', '_HOST')}=${address.host}: not an address of this machine`,
      );
    default:
      return new PortError(`${address.variable}=${address.port}: cannot listen on ${where}: ${err.message}`);
  }
}

/** What to say of servers whose ports other processes hold. */
function inUse(addresses: ServerAddress[]): string {
  const list = (what: (address: ServerAddress) => string) => addresses.map(what).join(', ');
  const ports = `${list((d) => `${d.variable}=${d.port}`)}: ${list((d) => `${d.host}:${d.port}`)}`;
  return addresses.length === 1
    ? `${ports} is already in use (another process listens there); choose a free port with ${addresses[0].variable}`
    : `${ports} are already in use (other processes listen there); choose free ports with ${list((d) => d.variable)}`;
}

function tryListen(address: ServerAddress): Promise<NodeJS.ErrnoException | null> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (err: NodeJS.ErrnoException) => resolve(err));
    server.listen({ host: address.host, port: address.port, exclusive: true }, () =>
      server.close(() => resolve(null)),
    );
  });
}

/**
 * Throws a PortError when two servers of the mode share a port, or when servers cannot listen (in use,
 * privileged, host not local): every problem found, in one line, so that one run shows all there is to fix.
 * Port 0 (any free port) is never a conflict.
 */
export async function checkPorts(config: Config, mode: ServeMode): Promise<void> {
  const addresses = serverAddressesOf(config, mode).filter((address) => address.port !== 0);
  const problems: string[] = [];
  for (let i = 0; i < addresses.length; i++) {
    for (let j = 0; j < i; j++) {
      if (addresses[i].port === addresses[j].port) {
        problems.push(
          `${addresses[j].variable} and ${addresses[i].variable} are both ${addresses[i].port}: each server needs its own port`,
        );
      }
    }
  }
  // each port once (a port two servers share is reported above), all at the same time
  const distinct = addresses.filter(
    (address, i) => addresses.findIndex((a) => a.port === address.port) === i,
  );
  const failures = await Promise.all(
    distinct.map(async (address) => ({ address, err: await tryListen(address) })),
  );
  const taken = failures.filter(({ err }) => err?.code === 'EADDRINUSE').map(({ address }) => address);
  if (taken.length > 0) problems.push(inUse(taken));
  for (const { address, err } of failures) {
    if (err && err.code !== 'EADDRINUSE') problems.push(portError(address, err).message);
  }
  if (problems.length > 0) throw new PortError(problems.join('; '));
}
