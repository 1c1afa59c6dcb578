import { parentPort, workerData } from 'node:worker_threads';
import { signTx, type KeyMaterial, type SignRequest } from './signer.js';

// Worker thread of the signer pool: signs batches of cleared transactions (see signer-pool.ts).

const keys = workerData as KeyMaterial;

parentPort!.on('message', (message: { id: number; requests: SignRequest[] }) => {
  const raws: Uint8Array[] = [];
  const txids: Uint8Array[] = [];
  for (const request of message.requests) {
    const signed = signTx(request, keys);
    raws.push(signed.raw);
    txids.push(signed.txid);
  }
  parentPort!.postMessage({ id: message.id, raws, txids });
});
