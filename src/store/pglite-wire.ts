import { Duplex } from 'node:stream';
import type { MessagePort } from 'node:worker_threads';
import { transferableBytes } from '../worker-threads.js';
import type { PGlite } from '@electric-sql/pglite';

/** The PostgreSQL protocol 3.0 version code that follows the length of a startup message. */
const PROTOCOL_3 = 196_608;
/** `Terminate`: the client is leaving. Not forwarded: PGlite's one session outlives the connection. */
const TERMINATE = 0x58;

/**
 * PGlite's one database session, reached by postgres.js through in-process connections (its `socket`
 * option) instead of a listener: nothing outside the process reaches the embedded database, through neither
 * a TCP port another local user could reach (PGlite has no authentication: anyone on the port was
 * superuser) nor a socket file.
 *
 * Faster too: bench/ceiling-server.ts (one primary-key lookup per request, autocannon -c 32 -d 10) answered
 * 26.4-26.6k req/s through it, against 11.6-12.3k through pglite-socket's TCP listener (same machine, runs
 * interleaved).
 *
 * Connections take turns, each one's messages in the order they arrive, under PGlite's query lock. The
 * session has one transaction at a time: while a connection is inside one, only its own messages run (the
 * others wait for its COMMIT or ROLLBACK), so a read from another connection (the API's, while the ingest
 * thread writes a block: `serveOverPort`) never lands inside it. A connection that leaves inside a
 * transaction has it rolled back before anything else runs.
 *
 * PGlite runs on this thread and each call is synchronous (WASM): between two calls the event loop gets a
 * turn (`setImmediate`) once calls have run for YIELD_AFTER_MS, so requests that need no database (/health)
 * are answered while a large message's statements run one after another (bulk inserts are cut into
 * statements of bounded size for this: store/write/bulk.ts).
 */
export class PgliteSession {
  private readonly waiting: Turn[] = [];
  private running = false;
  /** The connection inside a transaction: only its messages may run until it ends. */
  private holder: PgliteConnection | undefined;
  private ranSince = 0;
  private largestCall = { bytes: 0, ms: 0 };

  constructor(private readonly pglite: PGlite) {}

  /**
   * The largest message one call ran (bytes) and the longest call (ms) since the last look, then forgotten:
   * how long this thread was held at once, and by how much SQL. (A test holds ingest to its bound.)
   */
  takeLargestCall(): { bytes: number; ms: number } {
    const largest = this.largestCall;
    this.largestCall = { bytes: 0, ms: 0 };
    return largest;
  }

  /** A new connection, for postgres.js's `socket` option. */
  connect(): Duplex {
    return new PgliteConnection(this);
  }

  /**
   * Serves connections opened by another thread over `port` (`connectOverPort` there): each of that
   * thread's connections is one of this session's. When the port closes (the thread stopped), its
   * connections are released, a transaction left open rolled back.
   */
  serveOverPort(port: MessagePort): void {
    const connections = new Map<number, Duplex>();
    port.on('message', (message: PortFrame) => {
      let connection = connections.get(message.id);
      if (!connection) {
        if (message.data === undefined) return;
        connection = this.connect();
        connections.set(message.id, connection);
        const id = message.id;
        connection.on('data', (data: Buffer) => {
          const bytes = transferableBytes(data);
          port.postMessage({ id, data: bytes } satisfies PortFrame, [bytes]);
        });
        connection.on('close', () => {
          connections.delete(id);
          port.postMessage({ id } satisfies PortFrame);
        });
        connection.on('error', () => {});
      }
      if (message.data === undefined) connection.end();
      else connection.write(Buffer.from(message.data));
    });
    port.on('close', () => {
      for (const connection of connections.values()) connection.destroy();
      connections.clear();
    });
  }

  /** Runs `message` (one or more whole protocol messages) for `connection`; the answer goes to `reply`. */
  run(connection: PgliteConnection, message: Buffer, reply: (data: Buffer) => void): Promise<void> {
    return this.enqueue(connection, async () => {
      const started = performance.now();
      await this.pglite.runExclusive(() =>
        this.pglite.execProtocolRawStream(message, {
          // The bytes are a view of PGlite's memory, reused by the next call: copied out.
          onRawData: (data) => reply(Buffer.from(data)),
        }),
      );
      this.holder = !this.pglite.closed && this.pglite.isInTransaction() ? connection : undefined;
      this.largestCall = {
        bytes: Math.max(this.largestCall.bytes, message.length),
        ms: Math.max(this.largestCall.ms, performance.now() - started),
      };
    });
  }

  /** `connection` is gone: a transaction it left open is rolled back. */
  release(connection: PgliteConnection): Promise<void> {
    return this.enqueue(connection, async () => {
      if (this.holder !== connection) return;
      this.holder = undefined;
      if (!this.pglite.closed && this.pglite.isInTransaction()) await this.pglite.exec('ROLLBACK');
    });
  }

  private enqueue(connection: PgliteConnection, work: () => Promise<void>): Promise<void> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ connection, work, resolve, reject });
      this.next();
    });
  }

  /** Runs the first waiting turn allowed now (the holder's, if a transaction is open). */
  private next(): void {
    if (this.running) return;
    const index = this.holder ? this.waiting.findIndex((t) => t.connection === this.holder) : 0;
    if (index < 0 || index >= this.waiting.length) return;
    const [turn] = this.waiting.splice(index, 1);
    this.running = true;
    const started = performance.now();
    turn
      .work()
      .then(turn.resolve, turn.reject)
      .finally(() => {
        this.running = false;
        this.ranSince += performance.now() - started;
        if (this.ranSince < YIELD_AFTER_MS) return this.next();
        this.ranSince = 0;
        setImmediate(() => this.next());
      });
  }
}

/**
 * How long PGlite calls may run back to back before the event loop gets a turn. A yield costs a few
 * microseconds when nothing else waits; queries of the read API take well under a millisecond, so they
 * rarely reach it.
 */
const YIELD_AFTER_MS = 20;

interface Turn {
  connection: PgliteConnection;
  work: () => Promise<void>;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/** A connection's bytes between threads: `data` absent means the connection ended. */
interface PortFrame {
  id: number;
  data?: ArrayBuffer;
}

/**
 * Connections, for postgres.js's `socket` option in a thread without PGlite, to the session another thread
 * serves over `port` (`PgliteSession.serveOverPort`).
 */
export function connectOverPort(port: MessagePort): () => Duplex {
  const connections = new Map<number, Duplex>();
  let nextId = 0;
  port.on('message', (message: PortFrame) => {
    const connection = connections.get(message.id);
    if (!connection) return;
    if (message.data === undefined) {
      connections.delete(message.id);
      connection.push(null);
    } else connection.push(Buffer.from(message.data));
  });
  port.on('close', () => {
    for (const connection of connections.values()) connection.destroy(new Error('PGlite session closed'));
    connections.clear();
  });
  return () => {
    const id = nextId++;
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      port.postMessage({ id } satisfies PortFrame);
    };
    const connection = new Duplex({
      read() {},
      write(chunk: Buffer, _encoding, callback) {
        const bytes = transferableBytes(chunk);
        port.postMessage({ id, data: bytes } satisfies PortFrame, [bytes]);
        callback();
      },
      final(callback) {
        end();
        callback();
      },
      destroy(err, callback) {
        end();
        connections.delete(id);
        callback(err);
      },
    });
    // what postgres.js checks before sending its goodbye (net.Socket has it)
    Object.defineProperty(connection, 'readyState', {
      get: () => (connection.destroyed || connection.writableEnded ? 'closed' : 'open'),
    });
    connections.set(id, connection);
    return connection;
  };
}

/** One postgres.js connection: cuts the byte stream into protocol messages for the session. */
class PgliteConnection extends Duplex {
  private buffered: Buffer = Buffer.alloc(0);
  private startup = true;
  private released: Promise<void> | undefined;

  constructor(private readonly session: PgliteSession) {
    super();
  }

  /** What postgres.js checks before sending its goodbye (net.Socket has it). */
  get readyState(): 'open' | 'closed' {
    return this.destroyed || this.writableEnded ? 'closed' : 'open';
  }

  override _read() {}

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (err?: Error | null) => void) {
    // postgres.js writes whole messages (it builds each in a buffer of its own): joining is for safety
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    // What arrived together runs as one call: a pipelined query (Bind, Execute, Sync...) enters PGlite once
    // (measured: 5,000 pipelined one-row selects 570-665 ms, against 1.2-1.7 s one message per call).
    const batch: Buffer[] = [];
    let terminated = false;
    for (;;) {
      const message = this.nextMessage();
      if (!message) break;
      if (this.startup) {
        this.startup = false;
        this.send([message]);
      } else if (message[0] === TERMINATE) terminated = true;
      else batch.push(message);
    }
    this.send(batch);
    // Released now, in arrival order, not when the stream winds down: a new connection's first message
    // may arrive before that.
    if (terminated) void this.release();
    callback();
  }

  override _final(callback: (err?: Error | null) => void) {
    this.release().then(() => {
      this.push(null);
      callback();
    }, callback);
  }

  override _destroy(err: Error | null, callback: (err?: Error | null) => void) {
    this.release().then(
      () => callback(err),
      () => callback(err),
    );
  }

  private send(messages: Buffer[]) {
    if (messages.length === 0) return;
    const message = messages.length === 1 ? messages[0] : Buffer.concat(messages);
    this.session
      .run(this, message, (data) => {
        if (!this.destroyed) this.push(data);
      })
      .catch((err: unknown) => this.destroy(err as Error));
  }

  private release(): Promise<void> {
    this.released ??= this.session.release(this).catch(() => {});
    return this.released;
  }

  /** The next complete message (a startup message has no type byte), or undefined until more arrives. */
  private nextMessage(): Buffer | undefined {
    const data = this.buffered;
    let length: number;
    if (this.startup) {
      if (data.length < 8) return undefined;
      if (data.readInt32BE(4) !== PROTOCOL_3) {
        this.destroy(new Error('PGlite connection: not a protocol 3.0 startup message'));
        return undefined;
      }
      length = data.readInt32BE(0);
    } else {
      if (data.length < 5) return undefined;
      length = 1 + data.readInt32BE(1);
    }
    if (data.length < length) return undefined;
    this.buffered = data.subarray(length);
    return data.subarray(0, length);
  }
}
