import type { Worker } from 'node:worker_threads';
import { startModuleWorker } from '../worker-threads.js';
import { signTx, type KeyMaterial, type SignRequest, type SignedTx } from './signer.js';

// Signing is the generator's one real cost (an ECDSA signature per transaction, two when sponsored). The
// pool spreads each batch over worker threads and hands results back in request order; with 0 workers
// it signs in the calling thread. Signatures are deterministic, so the output does not depend on the
// number of workers.

interface Pending {
  resolve: (result: { raws: Uint8Array[]; txids: Uint8Array[] }) => void;
  reject: (err: Error) => void;
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

export class SignerPool {
  private readonly workers: Worker[] = [];
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private failure: Error | undefined;
  private closing = false;

  constructor(
    private readonly keys: KeyMaterial,
    workerCount: number,
  ) {
    for (let i = 0; i < workerCount; i++) {
      const worker = startModuleWorker(import.meta.url, 'sign-worker', { workerData: keys });
      worker.on('message', (message: { id: number; raws: Uint8Array[]; txids: Uint8Array[] }) => {
        const entry = this.pending.get(message.id);
        this.pending.delete(message.id);
        entry?.resolve(message);
      });
      worker.on('error', (err) => this.fail(err));
      worker.on('exit', (code) => {
        if (code !== 0 && !this.closing) this.fail(new Error(`signer worker exited with code ${code}`));
      });
      this.workers.push(worker);
    }
  }

  private fail(err: Error) {
    this.failure ??= err;
    for (const entry of this.pending.values()) entry.reject(err);
    this.pending.clear();
  }

  private send(worker: Worker, requests: SignRequest[]) {
    return new Promise<{ raws: Uint8Array[]; txids: Uint8Array[] }>((resolve, reject) => {
      if (this.failure) return reject(this.failure);
      const id = this.nextId++;
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ id, requests });
    });
  }

  /** Signs the requests; results come back in the same order. */
  async sign(requests: SignRequest[]): Promise<SignedTx[]> {
    if (this.workers.length === 0 || requests.length < 8) {
      return requests.map((r) => signTx(r, this.keys));
    }
    const share = Math.ceil(requests.length / this.workers.length);
    const parts = await Promise.all(
      this.workers.map((worker, i) => {
        const slice = requests.slice(i * share, (i + 1) * share);
        return slice.length > 0 ? this.send(worker, slice) : { raws: [], txids: [] };
      }),
    );
    const out: SignedTx[] = [];
    for (const part of parts) {
      for (let i = 0; i < part.raws.length; i++) {
        out.push({ raw: asBuffer(part.raws[i]), txid: asBuffer(part.txids[i]) });
      }
    }
    return out;
  }

  async close(): Promise<void> {
    this.closing = true;
    await Promise.all(this.workers.map((w) => w.terminate()));
    this.workers.length = 0;
  }
}
