import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * Starts a worker thread running the module `name` beside `importMetaUrl` (the caller's `import.meta.url`),
 * with the caller's own extension: `.ts` under tsx (the worker registers tsx before importing it: a worker
 * does not inherit the loader), `.js` once built.
 */
export function startModuleWorker(importMetaUrl: string, name: string, options: WorkerOptions = {}): Worker {
  const extension = extname(fileURLToPath(importMetaUrl));
  const url = new URL(`./${name}${extension}`, importMetaUrl);
  const source =
    extension === '.ts'
      ? `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))})` +
        `.then((tsx) => { tsx.register(); return import(${JSON.stringify(url.href)}); })`
      : `import(${JSON.stringify(url.href)})`;
  return new Worker(source, { ...options, eval: true });
}

/**
 * The bytes of `data` as an ArrayBuffer to transfer to another thread (`postMessage(m, [buffer])`): its own
 * buffer when `data` spans all of it (a large body received into a buffer of its own: moved, not copied),
 * else a copy (a small Buffer is a view of a pool shared with others: transferring that would take it away).
 */
export function transferableBytes(data: Uint8Array): ArrayBuffer {
  const buffer = data.buffer;
  if (buffer instanceof ArrayBuffer && data.byteOffset === 0 && data.byteLength === buffer.byteLength)
    return buffer;
  return new Uint8Array(data).buffer; // a copy (Buffer's own `slice` would be a view of the same memory)
}
