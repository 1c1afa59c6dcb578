import { parseArgs } from 'node:util';
import { ConfigError, describeConfig, loadConfig } from '../config.js';
import { exportFile, progressBar, replayFile } from '../ingest/replay.js';
import { KEYS_USAGE, KeysUsageError, runKeysCommand } from './keys.js';
import { start } from './demo.js';
import { generateFile } from './generate.js';
import { defaultNakamotoHeight } from '../devnet/chain.js';
import { VestingFileError } from '../ingest/vesting.js';
import { createIngestor, createLogger, openStore } from './runtime.js';
import { serve, stopOnSignals, type ServeMode } from './serve.js';

const USAGE = `Usage: npm run cli -- <command> [options]

Commands:
  start                               serve on the embedded database, first indexing a demo chain if it is empty
  serve [--read-only | --write-only]  run the read API (public) and the event observer (loopback)
  migrate                             apply database migrations and exit
  replay --file F.tsv                 ingest a recorded event stream (TSV of the raw message log)
  export --file F.tsv                 write the raw message log as a TSV that replay can read
  generate --out F.tsv [--blocks N] [--accounts M] [--seed S] [--txs-per-block K] [--workers W]
           [--nakamoto-height H|none]
                                      write a deterministic synthetic chain (really signed txs) that replay reads;
                                      it enters epoch 3.0 (Nakamoto) at height H (default: 40% in), or never
${KEYS_USAGE}

Configuration (environment variables):
${describeConfig()
  .map((c) => `  ${c.name.padEnd(24)} ${c.doc} (default: ${c.default || '""'})`)
  .join('\n')}
`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: command === 'keys',
    options: {
      file: { type: 'string' },
      label: { type: 'string' },
      out: { type: 'string' },
      blocks: { type: 'string', default: '100' },
      accounts: { type: 'string', default: '100' },
      seed: { type: 'string', default: '1' },
      'txs-per-block': { type: 'string', default: '20' },
      workers: { type: 'string' },
      'nakamoto-height': { type: 'string' },
      'read-only': { type: 'boolean', default: false },
      'write-only': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (!command || values.help || command === 'help') {
    process.stdout.write(USAGE);
    return command ? 0 : 1;
  }
  const config = loadConfig();
  const logger = createLogger(config);

  switch (command) {
    case 'serve': {
      if (values['read-only'] && values['write-only'])
        throw new UsageError('--read-only and --write-only exclude each other');
      const mode: ServeMode = values['read-only']
        ? 'read-only'
        : values['write-only']
          ? 'write-only'
          : 'both';
      stopOnSignals(await serve(config, logger, mode), logger);
      return -1;
    }
    case 'start': {
      stopOnSignals(await start(config, logger), logger);
      return -1;
    }
    case 'generate': {
      const out = values.out ?? values.file;
      if (!out) throw new UsageError('--out is required');
      const blocks = integerOption('blocks', values.blocks, 1);
      const nakamoto = values['nakamoto-height'];
      const report = await generateFile(
        {
          blocks,
          accounts: integerOption('accounts', values.accounts, 8),
          seed: values.seed,
          txsPerBlock: integerOption('txs-per-block', values['txs-per-block'], 1),
          workers: values.workers === undefined ? undefined : integerOption('workers', values.workers, 0),
          nakamotoHeight:
            nakamoto === 'none'
              ? undefined
              : nakamoto === undefined
                ? defaultNakamotoHeight(blocks)
                : integerOption('nakamoto-height', nakamoto, 2),
        },
        out,
        true,
      );
      process.stdout.write(JSON.stringify({ file: out, ...report }, null, 2) + '\n');
      return 0;
    }
    case 'migrate': {
      const store = await openStore(config, logger);
      await store.close();
      return 0;
    }
    case 'replay': {
      const file = requireFile(values.file);
      const store = await openStore(config, logger);
      try {
        const bar = progressBar('replay');
        const stats = await replayFile(createIngestor(store, config, logger), file, {
          onProgress: bar.update,
        });
        bar.done();
        logger.info(
          { ...stats, blocks_per_second: Math.round(stats.blocks / Math.max(stats.seconds, 1e-9)) },
          'replay finished',
        );
      } finally {
        await store.close();
      }
      return 0;
    }
    case 'export': {
      const file = requireFile(values.file);
      const store = await openStore(config, logger);
      try {
        const count = await exportFile(store, file);
        logger.info({ file, messages: count }, 'export finished');
      } finally {
        await store.close();
      }
      return 0;
    }
    case 'keys': {
      // Quiet logs: stdout carries the new key (or the list) for scripts.
      const store = await openStore(config, logger.child({}, { level: 'warn' }));
      try {
        const [action, id] = positionals;
        return await runKeysCommand(
          store,
          { action, id, label: values.label },
          { out: (t) => process.stdout.write(`${t}\n`), info: (t) => process.stderr.write(`${t}\n`) },
        );
      } catch (err) {
        throw err instanceof KeysUsageError ? new UsageError(err.message) : err;
      } finally {
        await store.close();
      }
    }
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

class UsageError extends Error {}

function integerOption(name: string, value: string, min: number): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min)
    throw new UsageError(`--${name} must be an integer >= ${min}, got "${value}"`);
  return n;
}

function requireFile(file: string | undefined): string {
  if (!file) throw new UsageError('--file is required');
  return file;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (err: unknown) => {
    if (err instanceof UsageError || err instanceof ConfigError || err instanceof VestingFileError) {
      process.stderr.write(`${err.message}\n\n${err instanceof UsageError ? USAGE : ''}`);
      process.exit(2);
    }
    process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
