import { createHash } from 'node:crypto';
import { chmod, mkdir, readFile, realpath, rm, unlink, writeFile } from 'node:fs/promises';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { basename, join } from 'node:path';
import lockfile from 'proper-lockfile';
import { OperatorError } from '../errors.js';

// One process per embedded database directory. PGlite has no lock of its own: two processes on one
// directory each write pages the other does not know about (a user lost keys this way, then the directory
// would not open: "could not locate a valid checkpoint record").
//
// The lock is a Unix socket the holder listens on, in a private (0700) folder of the directory: binding a
// path succeeds for one process only, and the kernel answers a connection only while that process lives,
// so a holder that died (even by SIGKILL) is recognised at once — no heartbeat, no staleness delay, no
// pid that could have been reused. The same socket lets a command reach the holder (`keys` goes through
// a running server instead of writing behind its back). Checking for a dead holder and replacing its
// socket is a short critical section, serialised between processes by proper-lockfile.

/** Who holds a directory, as the holder wrote it down. */
export interface DirectoryHolder {
  pid: number;
  /** What the holder runs, e.g. `main.ts serve`. */
  command: string;
  /** When it took the directory (ISO 8601). */
  since: string;
}

/**
 * A database could not be opened or reached, for a reason its user can act on (the CLI prints the message
 * as one line): the message says what and what to do.
 */
export class DatabaseAccessError extends OperatorError {}

export class DatabaseInUseError extends DatabaseAccessError {
  constructor(
    readonly directory: string,
    readonly holder: DirectoryHolder | undefined,
  ) {
    const who = holder
      ? `process ${holder.pid} (${holder.command}, since ${holder.since})`
      : 'another process';
    super(
      `the database directory ${directory} is in use by ${who}: one process at a time may open it; ` +
        'stop that process first, or set PGLITE_DIR to another directory',
    );
  }
}

/** What the holder answers to a request sent through its socket (JSON, one line each way). */
export type ControlHandler = (request: unknown) => Promise<unknown>;

export interface DirectoryLock {
  /** Sets what answers requests from other processes (until set, they are told to try again). */
  serve(handler: ControlHandler): void;
  /** Stops listening and gives the directory up. */
  release(): Promise<void>;
}

const PRIVATE_FOLDER = '.control';
const SOCKET_NAME = 'control.sock';
const HOLDER_FILE = 'holder.json';
/** sun_path holds 108 bytes on Linux (104 on macOS), with its terminating NUL. */
const MAX_SOCKET_PATH = 100;
/** Largest request accepted through the socket. */
const MAX_REQUEST_BYTES = 64 * 1024;

async function privateFolder(path: string): Promise<string> {
  await mkdir(path, { recursive: true, mode: 0o700 });
  // mkdir does not change a folder that exists
  await chmod(path, 0o700);
  return path;
}

/**
 * The socket's path: in the directory's private folder, or, when that path is too long for a Unix socket,
 * in a private folder of this user under the system temp directory, named by the directory's real path
 * (every process finds the same one, whatever path it was given).
 */
async function socketPath(directory: string): Promise<string> {
  const inside = join(directory, PRIVATE_FOLDER, SOCKET_NAME);
  if (Buffer.byteLength(inside) <= MAX_SOCKET_PATH) return inside;
  const id = createHash('sha256')
    .update(await realpath(directory))
    .digest('hex')
    .slice(0, 24);
  const folder = await privateFolder(join(tmpdir(), `stacks-read-api-${userInfo().uid}`));
  return join(folder, `${id}.sock`);
}

/** Resolves true when a process accepts connections on the socket (it may be busy: it is alive). */
function holderAlive(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(path);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    // ECONNREFUSED: nobody listens any more; ENOENT: the holder just left. Anything else (EAGAIN: its
    // backlog is full) is a holder alive.
    socket.once('error', (err: NodeJS.ErrnoException) =>
      resolve(err.code !== 'ECONNREFUSED' && err.code !== 'ENOENT'),
    );
  });
}

function listen(server: Server, path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const failed = (err: Error) => reject(err);
    server.once('error', failed);
    server.listen(path, () => {
      server.off('error', failed);
      resolve();
    });
  });
}

async function readHolder(directory: string): Promise<DirectoryHolder | undefined> {
  try {
    const holder = JSON.parse(
      await readFile(join(directory, PRIVATE_FOLDER, HOLDER_FILE), 'utf8'),
    ) as DirectoryHolder;
    return typeof holder.pid === 'number' ? holder : undefined;
  } catch {
    return undefined;
  }
}

function processCommand(): string {
  const [, script, ...args] = process.argv;
  return [script ? basename(script) : 'node', ...args].join(' ');
}

/** Takes the directory for this process, or throws DatabaseInUseError naming the process that has it. */
export async function lockDirectory(directory: string): Promise<DirectoryLock> {
  const folder = await privateFolder(join(directory, PRIVATE_FOLDER));
  const path = await socketPath(directory);
  let handler: ControlHandler | undefined;
  const connections = new Set<Socket>();
  const server = createServer((socket) => {
    connections.add(socket);
    socket.once('close', () => connections.delete(socket));
    answer(socket, () => handler);
  });
  const unlock = await lockfile.lock(directory, {
    lockfilePath: join(folder, 'opening.lock'),
    realpath: false,
    stale: 10_000,
    retries: { retries: 100, minTimeout: 10, maxTimeout: 100 },
    // Held for milliseconds; should this process stall past `stale` meanwhile, opening goes on anyway.
    onCompromised: () => {},
  });
  try {
    try {
      await listen(server, path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
      if (await holderAlive(path)) throw new DatabaseInUseError(directory, await readHolder(directory));
      // its holder is gone (killed, crashed): the socket file is all that is left of it
      await unlink(path);
      await listen(server, path);
    }
    await chmod(path, 0o600);
    const holder: DirectoryHolder = {
      pid: process.pid,
      command: processCommand(),
      since: new Date().toISOString(),
    };
    await writeFile(join(folder, HOLDER_FILE), JSON.stringify(holder) + '\n', { mode: 0o600 });
  } catch (err) {
    if (server.listening) await new Promise((resolve) => server.close(resolve));
    throw err;
  } finally {
    await unlock();
  }
  server.unref();
  return {
    serve(next) {
      handler = next;
    },
    async release() {
      await rm(join(folder, HOLDER_FILE), { force: true });
      for (const socket of connections) socket.destroy();
      // closing a listening Unix socket removes its file
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Reads one JSON request line, answers one JSON line: `{ result }` or `{ error }`. */
function answer(socket: Socket, handler: () => ControlHandler | undefined) {
  let received = '';
  socket.setEncoding('utf8');
  const reply = (body: object) => socket.end(JSON.stringify(body) + '\n');
  socket.on('error', () => socket.destroy());
  socket.on('data', (chunk: string) => {
    received += chunk;
    const end = received.indexOf('\n');
    if (end < 0 && received.length <= MAX_REQUEST_BYTES) return;
    socket.removeAllListeners('data');
    if (end < 0) return reply({ error: 'request too large' });
    const serve = handler();
    if (!serve) return reply({ error: 'the process holding the database is starting: try again' });
    let request: unknown;
    try {
      request = JSON.parse(received.slice(0, end));
    } catch {
      return reply({ error: 'the request is not JSON' });
    }
    serve(request).then(
      (result) => reply({ result }),
      (err: unknown) => reply({ error: (err as Error).message ?? String(err) }),
    );
  });
}

/** Sends `request` to the process holding `directory` and returns its answer (errors thrown as Error). */
export async function askDirectoryHolder(
  directory: string,
  request: unknown,
  timeoutMs = 30_000,
): Promise<unknown> {
  const path = await socketPath(directory);
  const socket = connect(path);
  socket.setEncoding('utf8');
  socket.setTimeout(timeoutMs);
  return new Promise((resolve, reject) => {
    let received = '';
    socket.once('connect', () => socket.write(JSON.stringify(request) + '\n'));
    socket.on('data', (chunk: string) => (received += chunk));
    socket.once('timeout', () => {
      socket.destroy();
      reject(new Error(`the process holding ${directory} did not answer within ${timeoutMs / 1000} s`));
    });
    socket.once('error', (err) =>
      reject(new Error(`cannot reach the process holding ${directory}: ${err.message}`)),
    );
    socket.once('end', () => {
      try {
        const body = JSON.parse(received) as { result?: unknown; error?: string };
        if (body.error !== undefined) reject(new Error(body.error));
        else resolve(body.result);
      } catch {
        reject(new Error(`the process holding ${directory} answered something else than JSON`));
      }
    });
  });
}
