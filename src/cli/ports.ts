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

export class PortError extends OperatorError {}

/** The one-line error for a door that cannot listen, naming its variable. */
export function portError(door: Door, err: NodeJS.ErrnoException): PortError {
  const where = `${door.host}:${door.port}`;
  switch (err.code) {
    case 'EADDRINUSE':
      return new PortError(
        `${door.variable}=${door.port}: ${where} is already in use (another process listens there); ` +
          `choose a free port with ${door.variable}`,
      );
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
 * Throws a PortError when two doors of the mode share a port, or one cannot listen (in use, privileged,
 * host not local). Port 0 (any free port) is never a conflict.
 */
export async function checkPorts(config: Config, mode: ServeMode): Promise<void> {
  const doors = doorsOf(config, mode).filter((door) => door.port !== 0);
  for (let i = 0; i < doors.length; i++) {
    for (let j = 0; j < i; j++) {
      if (doors[i].port === doors[j].port) {
        throw new PortError(
          `${doors[j].variable} and ${doors[i].variable} are both ${doors[i].port}: each door needs its own port`,
        );
      }
    }
  }
  for (const door of doors) {
    const err = await tryListen(door);
    if (err) throw portError(door, err);
  }
}
