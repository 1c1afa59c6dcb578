import { constants } from 'node:fs';
import {
  access,
  chmod,
  mkdir,
  open,
  readFile,
  rm,
  unlink,
  writeFile,
  type FileHandle,
} from 'node:fs/promises';
import { connect, createServer, type Server, type Socket } from 'node:net';
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
// pid that could have been reused. The socket is a file of the directory itself, so the lock follows the
// directory (its device and inode), not the name it was given: every spelling finds the same one. The same
// socket lets a command reach the holder (`keys` goes through a running server instead of writing behind
// its back). Checking for a dead holder and replacing its socket is a short critical section, serialised
// between processes by proper-lockfile.

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
/** Opens a folder itself, never what a link points to (a link fails: ENOTDIR or ELOOP). */
const OPEN_FOLDER = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/**
 * The directory's private folder, opened and checked: a folder (a link in its place is not followed),
 * owned by the user running the service, closed to other users. Whoever could write in it could listen
 * there first (answer `keys` commands, hold the directory) or remove the socket (let a second writer in);
 * root may write anywhere, so this is checked on the folder itself, not left to permission errors.
 */
async function openPrivateFolder(directory: string): Promise<FileHandle> {
  const path = join(directory, PRIVATE_FOLDER);
  const handle = await open(path, OPEN_FOLDER).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOTDIR' && err.code !== 'ELOOP') throw err;
    throw new DatabaseAccessError(
      `${path} is not a folder (a symbolic link, or a file): the control folder of a database directory ` +
        'must be a private folder of the user running the service; remove it',
    );
  });
  try {
    const { uid, mode } = await handle.stat();
    const user = process.getuid?.();
    if (user !== undefined && uid !== user) {
      throw new DatabaseAccessError(
        `${path} belongs to user ${uid}, not to the user running the service (${user}): the control folder ` +
          'of a database directory must be private to that user; remove it, or run as its owner',
      );
    }
    if ((mode & 0o077) !== 0) {
      throw new DatabaseAccessError(
        `${path} is open to other users (mode 0${(mode & 0o777).toString(8)}): the control folder of a ` +
          'database directory must be private (mode 0700); chmod 700 it, or remove it',
      );
    }
    return handle;
  } catch (err) {
    await handle.close();
    throw err;
  }
}

/**
 * The socket's address. The socket is always a file in the directory's private folder, so every spelling
 * of the directory (a link, "..", a bind mount) reaches the same file: the kernel resolves each to the one
 * folder. When its path is too long for a socket address, it is named through the open folder's descriptor
 * (Linux's /proc/self/fd/N: a short name for the same folder); there is no fallback folder elsewhere.
 */
async function socketAddress(directory: string, folder: FileHandle): Promise<string> {
  const inside = join(directory, PRIVATE_FOLDER, SOCKET_NAME);
  if (Buffer.byteLength(inside) <= MAX_SOCKET_PATH) return inside;
  const descriptor = `/proc/self/fd/${folder.fd}`;
  const named = await access(descriptor).then(
    () => true,
    () => false,
  );
  if (named) return join(descriptor, SOCKET_NAME);
  throw new DatabaseAccessError(
    `the database directory path ${directory} is too long for its control socket on this system ` +
      `(${inside} must fit in ${MAX_SOCKET_PATH} bytes): set PGLITE_DIR to a shorter path`,
  );
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
  const folder = join(directory, PRIVATE_FOLDER);
  await mkdir(directory, { recursive: true, mode: 0o700 });
  await mkdir(folder, { mode: 0o700 }).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'EEXIST') throw err;
  });
  const opened = await openPrivateFolder(directory);
  try {
    return await holdDirectory(directory, opened);
  } catch (err) {
    await opened.close();
    throw err;
  }
}

/** Listens on the socket in `opened`, the directory's private folder (kept open while held). */
async function holdDirectory(directory: string, opened: FileHandle): Promise<DirectoryLock> {
  const folder = join(directory, PRIVATE_FOLDER);
  const path = await socketAddress(directory, opened);
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
      // closing a listening Unix socket removes its file (through the folder's descriptor: still open)
      await new Promise((resolve) => server.close(resolve));
      await opened.close();
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
  const folder = await openPrivateFolder(directory).catch((err: Error) => {
    if (err instanceof DatabaseAccessError) throw err;
    throw new Error(`cannot reach the process holding ${directory}: ${err.message}`);
  });
  try {
    return await exchange(directory, await socketAddress(directory, folder), request, timeoutMs);
  } finally {
    await folder.close();
  }
}

/** Sends one request line to the socket at `path`, resolves with the answer's result. */
function exchange(directory: string, path: string, request: unknown, timeoutMs: number): Promise<unknown> {
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
