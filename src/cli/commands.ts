import type { Config } from '../config.js';
import { InvalidMessageError, OperatorError } from '../errors.js';
import { TsvFormatError } from '../protocol/tsv.js';
import { defaultNakamotoHeight } from '../devnet/chain.js';
import { exportFile, replayFile } from '../ingest/replay.js';
import { start as startDemo } from './demo.js';
import { generateFile } from './generate.js';
import { keysCommand, KeysUsageError } from './keys.js';
import type { ServeMode } from './ports.js';
import { replayProgress } from './progress.js';
import type { Logger } from 'pino';
import { createLogger } from './log.js';
import { createIngestor, openStore } from './runtime.js';
import { serve as startService } from './serve.js';
import type { Shutdown } from './shutdown.js';
import { UsageError } from './arguments.js';

// What each command does, once main.ts has checked its arguments, read the configuration and checked a
// server's ports (loaded by the command's action: everything heavy is imported from here).

export async function start(config: Config, logger: Logger, shutdown: Shutdown): Promise<void> {
  const service = await startDemo(config, logger, shutdown.signal);
  shutdown.onStop('the service', () => service.stop());
}

export async function serve(config: Config, mode: ServeMode, logger: Logger, shutdown: Shutdown) {
  const service = await startService(config, logger, mode, { signal: shutdown.signal });
  shutdown.onStop('the service', () => service.stop());
}

export async function migrate(config: Config): Promise<void> {
  const logger = createLogger(config);
  const store = await openStore(config, logger);
  await store.close();
}

export async function replay(config: Config, file: string): Promise<void> {
  const logger = createLogger(config);
  const store = await openStore(config, logger);
  const bar = replayProgress('replay');
  let complete = false;
  try {
    const stats = await replayFile(createIngestor(store, config, logger), file, {
      onProgress: bar.onProgress,
    }).catch((err: unknown) => {
      throw badInput(file, err) ?? err;
    });
    complete = true;
    bar.stop(true);
    logger.info(
      { ...stats, blocks_per_second: Math.round(stats.blocks / Math.max(stats.seconds, 1e-9)) },
      'replay finished',
    );
  } finally {
    if (!complete) bar.stop(false);
    await store.close();
  }
}

/**
 * A replay stopped by its input (a line that is not a recorded message, a message the node could not have
 * sent) is the operator's to fix: one line, no stack. The messages before it stay applied, and a replay of a
 * corrected file skips them as duplicates.
 */
function badInput(file: string, err: unknown): OperatorError | undefined {
  const cause = err instanceof Error && err.cause !== undefined ? err.cause : err;
  if (!(cause instanceof TsvFormatError || cause instanceof InvalidMessageError)) return undefined;
  return new OperatorError(
    `${file}: ${(err as Error).message}; the messages before it are applied, replay a corrected file to go on`,
  );
}

export async function exportLog(config: Config, file: string): Promise<void> {
  const logger = createLogger(config);
  const store = await openStore(config, logger);
  try {
    const count = await exportFile(store, file);
    logger.info({ file, messages: count }, 'export finished');
  } finally {
    await store.close();
  }
}

/** The sizes `generate` takes (its command-line options, parsed). */
export interface GenerateOptions {
  blocks: number;
  accounts: number;
  seed: string;
  txsPerBlock: number;
  workers?: number;
  /** `none`: the chain stays in epoch 2.x; default: 40% in */
  nakamotoHeight?: number | 'none';
}

export async function generate(options: GenerateOptions, out: string): Promise<void> {
  const { nakamotoHeight, ...sizes } = options;
  const report = await generateFile(
    {
      ...sizes,
      nakamotoHeight:
        nakamotoHeight === 'none' ? undefined : (nakamotoHeight ?? defaultNakamotoHeight(sizes.blocks)),
    },
    out,
    true,
  );
  process.stdout.write(JSON.stringify({ file: out, ...report }, null, 2) + '\n');
}

/**
 * `keys create|list|revoke`; resolves with the exit code. On a PGlite directory a running process holds,
 * the command runs in that process (see keysCommand).
 */
export async function keys(
  config: Config,
  args: { action: 'create' | 'list' | 'revoke'; label?: string; id?: string },
) {
  const logger = createLogger(config);
  try {
    return await keysCommand(
      // Quiet logs: stdout carries the new key (or the list) for scripts.
      () => openStore(config, logger.child({}, { level: 'warn' })),
      args,
      {
        out: (t) => process.stdout.write(`${t}\n`),
        info: (t) => process.stderr.write(`${t}\n`),
      },
    );
  } catch (err) {
    throw err instanceof KeysUsageError ? new UsageError(err.message) : err;
  }
}
