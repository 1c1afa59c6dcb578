import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { generateChain, type GenerateOptions, type GenerateReport } from '../devnet/chain.js';
import { formatTsvLine } from '../protocol/tsv.js';
import { MEMPOOL_GC_BLOCKS, MEMPOOL_GC_MINUTES } from '../store/write/mempool.js';
import { generationProgress } from './progress.js';

/**
 * Writes a generated chain as an event-replay TSV (the format `replay` reads). Its report counts the mempool
 * as this indexer will hold it (with its garbage collection).
 */
export async function generateFile(
  options: Omit<GenerateOptions, 'onProgress'>,
  file: string,
  showProgress = true,
): Promise<GenerateReport> {
  const out = createWriteStream(file, { encoding: 'utf8' });
  const bar = showProgress ? generationProgress('generate', options.blocks) : undefined;
  let report: GenerateReport | undefined;
  try {
    const chain = {
      mempoolGcBlocks: MEMPOOL_GC_BLOCKS,
      mempoolGcMinutes: MEMPOOL_GC_MINUTES,
      ...options,
      onProgress: bar?.onProgress,
    };
    report = await generateChain(chain, async (message) => {
      if (!out.write(formatTsvLine(message))) await once(out, 'drain');
    });
    return report;
  } finally {
    bar?.stop(report);
    out.end();
    await once(out, 'close');
  }
}
