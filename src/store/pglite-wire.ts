import { Duplex } from 'node:stream';
import type { PGlite } from '@electric-sql/pglite';

/** The PostgreSQL protocol 3.0 version code that follows the length of a startup message. */
const PROTOCOL_3 = 196_608;
/** `Terminate`: the client is leaving. Not forwarded: PGlite's one session outlives the connection. */
const TERMINATE = 0x58;

/**
 * PGlite's one database session, reached by postgres.js through in-process connections (its `socket`
 * option) instead of a listener: the embedded database has no door at all, neither a TCP port another
 * local user could reach (PGlite has no authentication: anyone on the port was superuser) nor a socket file.
 *
 * Faster too: bench/ceiling-server.ts (one primary-key lookup per request, autocannon -c 32 -d 10) answered
 * 26.4-26.6k req/s through it, against 11.6-12.3k through pglite-socket's TCP listener (same machine, runs
 * interleaved).
 *
 * Every connection's messages, and the clean-up of a connection that leaves, run on one queue in the order
 * they arrive, under PGlite's query lock. A connection that leaves inside a transaction has it rolled back
 * before anything that arrived later runs, so a new connection never finds itself inside it.
 */
export class PgliteSession {
  private queue: Promise<void> = Promise.resolve();
  /** The connection whose messages ran last: the one a transaction in progress belongs to. */
  private owner: PgliteConnection | undefined;

  constructor(private readonly pglite: PGlite) {}

  /** A new connection, for postgres.js's `socket` option. */
  connect(): Duplex {
    return new PgliteConnection(this);
  }

  /** Runs `message` (one or more whole protocol messages) for `connection`; the answer goes to `reply`. */
  run(connection: PgliteConnection, message: Buffer, reply: (data: Buffer) => void): Promise<void> {
    return this.enqueue(async () => {
      this.owner = connection;
      await this.pglite.runExclusive(() =>
        this.pglite.execProtocolRawStream(message, {
          // The bytes are a view of PGlite's memory, reused by the next call: copied out.
          onRawData: (data) => reply(Buffer.from(data)),
        }),
      );
    });
  }

  /** `connection` is gone: a transaction it left open is rolled back. */
  release(connection: PgliteConnection): Promise<void> {
    return this.enqueue(async () => {
      if (this.owner !== connection) return;
      this.owner = undefined;
      if (!this.pglite.closed && this.pglite.isInTransaction()) await this.pglite.exec('ROLLBACK');
    });
  }

  private enqueue(work: () => Promise<void>): Promise<void> {
    const done = this.queue.then(work);
    this.queue = done.catch(() => {});
    return done;
  }
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
