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
