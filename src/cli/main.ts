import { parseArgs } from 'node:util';
import { ConfigError, describeConfig, loadConfig } from '../config.js';
import { exportFile, progressBar, replayFile } from '../ingest/replay.js';
import { VestingFileError } from '../ingest/vesting.js';
import { createIngestor, createLogger, openStore } from './runtime.js';
import { serve, stopOnSignals, type ServeMode } from './serve.js';

const USAGE = `Usage: npm run cli -- <command> [options]

Commands:
  serve [--read-only | --write-only]  run the read API (public) and the event observer (loopback)
  migrate                             apply database migrations and exit
  replay --file F.tsv                 ingest a recorded event stream (TSV of the raw message log)
  export --file F.tsv                 write the raw message log as a TSV that replay can read

Configuration (environment variables):
${describeConfig()
  .map((c) => `  ${c.name.padEnd(24)} ${c.doc} (default: ${c.default || '""'})`)
  .join('\n')}
`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const { values } = parseArgs({
    args: rest,
    options: {
      file: { type: 'string' },
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
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

class UsageError extends Error {}

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
