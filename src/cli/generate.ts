import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { generateChain, type GenerateOptions, type GenerateReport } from '../devnet/chain.js';
import { formatTsvLine } from '../protocol/tsv.js';
import { MEMPOOL_GC_BLOCKS, MEMPOOL_GC_MINUTES } from '../store/write/mempool.js';

/** A one-line progress bar on stderr for the generator (redrawn at most 5 times a second). */
export function generationProgress(label: string, totalBlocks: number) {
  let last = 0;
  let latest = { height: 0, txs: 0 };
  const started = performance.now();
  const draw = () => {
    const ratio = totalBlocks > 0 ? Math.min(1, latest.height / totalBlocks) : 1;
    const width = 30;
    const filled = Math.round(ratio * width);
    const seconds = (performance.now() - started) / 1000;
    const rate = seconds > 0 ? latest.txs / seconds : 0;
    process.stderr.write(
      `\r${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${(ratio * 100).toFixed(0).padStart(3)}% ` +
        `height ${latest.height}, ${latest.txs} txs, ${rate.toFixed(0)} txs/s   `,
    );
  };
  return {
    update(progress: { height: number; txs: number }) {
      latest = progress;
      const now = performance.now();
      if (now - last < 200) return;
      last = now;
      draw();
    },
    done() {
      draw();
      process.stderr.write('\n');
    },
  };
}

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
  try {
    const chain = {
      mempoolGcBlocks: MEMPOOL_GC_BLOCKS,
      mempoolGcMinutes: MEMPOOL_GC_MINUTES,
      ...options,
      onProgress: bar?.update,
    };
    const report = await generateChain(chain, async (message) => {
      if (!out.write(formatTsvLine(message))) await once(out, 'drain');
    });
    bar?.done();
    return report;
  } finally {
    out.end();
    await once(out, 'close');
  }
}
