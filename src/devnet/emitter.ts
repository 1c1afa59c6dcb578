import type { RecordedMessage } from '../protocol/tsv.js';
import type { TxDraft } from './drafts.js';
import type { SignerPool } from './signer-pool.js';

// The messages the node posts, written in the order they are planned. A message is planned as its block is
// simulated, but its payload is built only when it is written: the payload holds tx ids and raw bytes, known
// once the signer pool has signed the drafts. Signing dominates the cost, so drafts are signed in chunks on
// worker threads while the next chunk is simulated, and a chunk's messages are written once it is signed. At
// most MAX_IN_FLIGHT chunks are kept, so memory stays bounded however long the chain.

export type MessageSink = (message: RecordedMessage) => void | Promise<void>;

export interface GenerateProgress {
  height: number;
  blocks: number;
  txs: number;
  messages: number;
}

export interface PlannedMessage {
  /** when the node posts it (ms since the epoch) */
  at: number;
  path: string;
  /** a block message's height, and the txs it counts for progress */
  block?: { height: number; txs: number };
  /** built when the message is written, once the txs it shows are signed */
  payload: () => object;
  /** what writing the message changes (the mempool model follows the messages in order) */
  onWrite?: () => void;
}

const CHUNK_TXS = 2048;
const MAX_IN_FLIGHT = 3;

export class MessageEmitter {
  private planned: PlannedMessage[] = [];
  private chunk: TxDraft[] = [];
  private readonly queued = new WeakSet<TxDraft>();
  private readonly inFlight: { signing: Promise<void>; messages: PlannedMessage[] }[] = [];

  /** messages written, and of them by path */
  messages = 0;
  readonly paths: Record<string, number> = {};
  signedTxs = 0;
  private blocks = 0;
  private height = 0;
  private txs = 0;

  constructor(
    private readonly pool: SignerPool,
    private readonly sink: MessageSink,
    private readonly onProgress?: (progress: GenerateProgress) => void,
  ) {}

  plan(message: PlannedMessage) {
    this.planned.push(message);
  }

  /** Queues a draft for signing in the current chunk, unless already queued: before any message shows it. */
  queueSigning(tx: TxDraft) {
    if (!tx.request || this.queued.has(tx)) return;
    this.queued.add(tx);
    this.chunk.push(tx);
  }

  /** Sends a full chunk to the signers, and writes the messages of the chunks beyond the in-flight bound. */
  async flush() {
    if (this.chunk.length >= CHUNK_TXS) this.signChunk();
    await this.writeSigned(MAX_IN_FLIGHT - 1);
  }

  /** Signs what is left and writes every planned message. */
  async finish() {
    this.signChunk();
    await this.writeSigned(0);
  }

  close(): Promise<void> {
    return this.pool.close();
  }

  private signChunk() {
    const drafts = this.chunk;
    const messages = this.planned;
    this.chunk = [];
    this.planned = [];
    this.signedTxs += drafts.length;
    const signing = this.pool.sign(drafts.map((d) => d.request!)).then((signed) => {
      signed.forEach((s, i) => {
        drafts[i].txid = '0x' + s.txid.toString('hex');
        drafts[i].rawTx = '0x' + s.raw.toString('hex');
      });
    });
    this.inFlight.push({ signing, messages });
  }

  private async writeSigned(keepInFlight: number) {
    while (this.inFlight.length > keepInFlight) {
      const { signing, messages } = this.inFlight.shift()!;
      await signing;
      for (const message of messages) await this.write(message);
    }
  }

  private async write(message: PlannedMessage) {
    const payload = JSON.stringify(message.payload());
    message.onWrite?.();
    this.messages++;
    this.paths[message.path] = (this.paths[message.path] ?? 0) + 1;
    await this.sink({
      id: String(this.messages),
      receivedAt: new Date(message.at),
      path: message.path,
      payload,
    });
    if (message.block) {
      this.blocks++;
      this.txs += message.block.txs;
      this.height = Math.max(this.height, message.block.height);
      this.onProgress?.({ height: this.height, blocks: this.blocks, txs: this.txs, messages: this.messages });
    }
  }
}
