import { connect, type Socket } from 'node:net';

// A lean HTTP/1.1 client for walks of many URLs against a real server: each connection writes a batch of GETs
// at once (pipelined) and reads their answers back in order, counting status codes. Far cheaper per request
// than fetch, so a walk of 200,000 URLs costs the server's time, not the client's.

export interface WalkOptions {
  host: string;
  port: number;
  /** connections used side by side (default 4) */
  connections?: number;
  /** requests written at once on a connection (default 32) */
  depth?: number;
  /** GET (default), or HEAD: the same work on the server without a body to read back */
  method?: 'GET' | 'HEAD';
}

/** Asks every URL `urlAt(0..count-1)` once; resolves with the count of answers per status code. */
export async function walkUrls(
  count: number,
  urlAt: (index: number) => string,
  options: WalkOptions,
): Promise<Record<number, number>> {
  const statuses: Record<number, number> = {};
  const depth = options.depth ?? 32;
  let next = 0;
  const worker = async () => {
    const connection = new PipelinedConnection(options.host, options.port, options.method ?? 'GET');
    try {
      while (next < count) {
        const batch: string[] = [];
        while (batch.length < depth && next < count) batch.push(urlAt(next++));
        for (const status of await connection.getAll(batch)) statuses[status] = (statuses[status] ?? 0) + 1;
      }
    } finally {
      connection.close();
    }
  };
  await Promise.all(Array.from({ length: options.connections ?? 4 }, worker));
  return statuses;
}

class PipelinedConnection {
  private readonly socket: Socket;
  private pending: Buffer = Buffer.alloc(0);
  private waiting:
    | { expected: number; statuses: number[]; resolve: (s: number[]) => void; reject: (e: Error) => void }
    | undefined;
  private failure: Error | undefined;

  constructor(
    private readonly host: string,
    port: number,
    private readonly method: 'GET' | 'HEAD',
  ) {
    this.socket = connect({ host, port });
    this.socket.on('data', (chunk: Buffer) => {
      this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
      this.parse();
    });
    this.socket.on('error', (err) => (this.failure = err));
    this.socket.on('close', () => {
      this.failure ??= new Error('connection closed');
      const waiting = this.waiting;
      this.waiting = undefined;
      waiting?.reject(this.failure);
    });
  }

  /** Sends the requests at once; resolves with their status codes, in order. */
  getAll(urls: string[]): Promise<number[]> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.waiting = { expected: urls.length, statuses: [], resolve, reject };
      this.socket.write(
        urls.map((url) => `${this.method} ${url} HTTP/1.1\r\nHost: ${this.host}\r\n\r\n`).join(''),
      );
    });
  }

  /** Takes every complete answer off the front of what was read. */
  private parse(): void {
    for (;;) {
      const waiting = this.waiting;
      if (!waiting) return;
      const headEnd = this.pending.indexOf('\r\n\r\n');
      if (headEnd < 0) return;
      const head = this.pending.subarray(0, headEnd).toString('latin1');
      const length = this.method === 'HEAD' ? 0 : Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
      const end = headEnd + 4 + length;
      if (this.pending.length < end) return;
      waiting.statuses.push(Number(head.slice(9, 12)));
      this.pending = this.pending.subarray(end);
      if (waiting.statuses.length === waiting.expected) {
        this.waiting = undefined;
        waiting.resolve(waiting.statuses);
      }
    }
  }

  close(): void {
    this.socket.destroy();
  }
}
