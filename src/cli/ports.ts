import { createServer } from 'node:net';
import type { Config } from '../config.js';
import { OperatorError } from '../errors.js';

// The ports a run mode listens on, checked free and distinct at start-up, before the database is opened or
// the demo chain indexed: a port in use is then a one-line error naming its variable, not a raw
// EADDRINUSE stack a minute later.

export type ServeMode = 'both' | 'read-only' | 'write-only';

export interface Door {
  /** the variable that sets the port (the host's is `*_HOST`) */
  variable: 'API_PORT' | 'OBSERVER_PORT' | 'METRICS_PORT';
  host: string;
  port: number;
}

/** The doors a mode opens: the observer unless read-only, the API unless write-only, metrics when enabled. */
export function doorsOf(config: Config, mode: ServeMode): Door[] {
  const doors: Door[] = [];
  if (mode !== 'read-only')
    doors.push({ variable: 'OBSERVER_PORT', host: config.OBSERVER_HOST, port: config.OBSERVER_PORT });
  if (mode !== 'write-only')
    doors.push({ variable: 'API_PORT', host: config.API_HOST, port: config.API_PORT });
  if (config.METRICS_ENABLED)
    doors.push({ variable: 'METRICS_PORT', host: config.METRICS_HOST, port: config.METRICS_PORT });
  return doors;
}

/** @internal exported for its tests */
export class PortError extends OperatorError {}

/** The one-line error for a door that cannot listen, naming its variable. */
export function portError(door: Door, err: NodeJS.ErrnoException): PortError {
  const where = `${door.host}:${door.port}`;
  switch (err.code) {
    case 'EADDRINUSE':
      return new PortError(inUse([door]));
    case 'EACCES':
      return new PortError(
        `${door.variable}=${door.port}: not allowed to listen on ${where} (ports below 1024 need privileges)`,
      );
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
      return new PortError(
        `${door.variable.replace('_PORT', '_HOST')}=${door.host}: not an address of this machine`,
      );
    default:
      return new PortError(`${door.variable}=${door.port}: cannot listen on ${where}: ${err.message}`);
  }
}

/** What to say of doors whose ports other processes hold. */
function inUse(doors: Door[]): string {
  const list = (what: (door: Door) => string) => doors.map(what).join(', ');
  const ports = `${list((d) => `${d.variable}=${d.port}`)}: ${list((d) => `${d.host}:${d.port}`)}`;
  return doors.length === 1
    ? `${ports} is already in use (another process listens there); choose a free port with ${doors[0].variable}`
    : `${ports} are already in use (other processes listen there); choose free ports with ${list((d) => d.variable)}`;
}

function tryListen(door: Door): Promise<NodeJS.ErrnoException | null> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (err: NodeJS.ErrnoException) => resolve(err));
    server.listen({ host: door.host, port: door.port, exclusive: true }, () =>
      server.close(() => resolve(null)),
    );
  });
}

/**
 * Throws a PortError when two doors of the mode share a port, or when doors cannot listen (in use,
 * privileged, host not local): every problem found, in one line, so that one run shows all there is to fix.
 * Port 0 (any free port) is never a conflict.
 */
export async function checkPorts(config: Config, mode: ServeMode): Promise<void> {
  const doors = doorsOf(config, mode).filter((door) => door.port !== 0);
  const problems: string[] = [];
  for (let i = 0; i < doors.length; i++) {
    for (let j = 0; j < i; j++) {
      if (doors[i].port === doors[j].port) {
        problems.push(
          `${doors[j].variable} and ${doors[i].variable} are both ${doors[i].port}: each door needs its own port`,
        );
      }
    }
  }
  // each port once (a port two doors share is reported above), all at the same time
  const distinct = doors.filter((door, i) => doors.findIndex((d) => d.port === door.port) === i);
  const failures = await Promise.all(distinct.map(async (door) => ({ door, err: await tryListen(door) })));
  const taken = failures.filter(({ err }) => err?.code === 'EADDRINUSE').map(({ door }) => door);
  if (taken.length > 0) problems.push(inUse(taken));
  for (const { door, err } of failures) {
    if (err && err.code !== 'EADDRINUSE') problems.push(portError(door, err).message);
  }
  if (problems.length > 0) throw new PortError(problems.join('; '));
}
