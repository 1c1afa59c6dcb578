#!/usr/bin/env node
import { Command, InvalidArgumentError, Option, type CommanderError } from 'commander';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { OperatorError } from '../errors.js';
import { describeConfig } from '../settings.js';
import { packageVersion } from '../version.js';
import { checkInputFile, checkOutputFile, UsageError } from './arguments.js';
import type { GenerateOptions } from './commands.js';
import type { ServeMode } from './ports.js';
import type { Shutdown } from './shutdown.js';

// The command line: parsing, validation of every argument, help and usage errors. Nothing heavy is
// imported here: an action checks its arguments, then reads the configuration (and checks a server's
// ports), and only then loads the command's work (./commands.ts: the database, the API, the generator).
// So `--help` and usage errors answer at once (compiled, ~0.15 s), and a bad argument, setting or port
// never opens the database.

/** How the user typed the command: `npm run cli --` in a checkout, else the installed `stacks-read-api`. */
const PROGRAM = ['cli', 'dev'].includes(process.env.npm_lifecycle_event ?? '')
  ? `npm run ${process.env.npm_lifecycle_event} --`
  : 'stacks-read-api';

/** An integer option at least `min` (commander calls it with the text given). */
function integerAtLeast(min: number) {
  return (text: string): number => {
    const n = Number(text);
    if (!/^\d+$/.test(text) || !Number.isSafeInteger(n) || n < min)
      throw new InvalidArgumentError(`an integer >= ${min} is expected`);
    return n;
  };
}

function nonEmpty(what: string) {
  return (text: string): string => {
    if (text.trim() === '') throw new InvalidArgumentError(`${what} cannot be empty`);
    return text.trim();
  };
}

/**
 * A required option, checked in the action rather than declared with commander's requiredOption: commander
 * reports a missing required option before an unknown one, so `--fil x` would say "--file is required"
 * instead of "unknown option '--fil' (Did you mean --file?)".
 */
function required(option: string, value: string | undefined): string {
  if (value === undefined) throw new UsageError(`required option '${option}' not specified`);
  return value;
}

/** The exit code of a command that keeps running (a server): main does not exit. */
const KEEP_RUNNING = -1;
let exitCode = 0;

const commands = () => import('./commands.js');
type Commands = Awaited<ReturnType<typeof commands>>;

/** The settings from the environment, validated (a bad one stops here, before any work). */
const configuration = async () => (await import('../config.js')).loadConfig();

/** The configuration of a server command, its ports checked free and distinct before any work. */
async function serverConfiguration(mode: ServeMode) {
  const config = await configuration();
  await (await import('./ports.js')).checkPorts(config, mode);
  return config;
}

/** What a server of each mode serves, as its first line says. */
const SERVED: Record<ServeMode, string> = {
  both: 'the read API and the event observer',
  'read-only': 'the read API',
  'write-only': 'the event observer',
};

/**
 * Runs a server command: says what it starts before anything slow (opening a database takes seconds),
 * stops on SIGTERM and SIGINT from then on (cli/shutdown.ts), and keeps the process running.
 */
async function runServer(
  config: Config,
  what: string,
  run: (work: Commands, logger: Logger, shutdown: Shutdown) => Promise<void>,
) {
  const logger = (await import('./log.js')).createLogger(config);
  const { describeDatabase } = await import('../config.js');
  logger.info(`starting ${what}: opening ${describeDatabase(config)}`);
  const shutdown = (await import('./shutdown.js')).stopOnSignals(logger);
  await shutdown.starting(async () => run(await commands(), logger, shutdown));
  exitCode = KEEP_RUNNING;
}

function buildProgram(): Command {
  const program = new Command(PROGRAM)
    .usage('<command> [options]')
    .description('Stacks read API: an event-observer indexer and the public read API')
    .version(packageVersion(), '-V, --version')
    .helpCommand('help [command]', 'show the help of a command')
    .addHelpText(
      'after',
      '\nConfiguration (environment variables):\n' +
        describeConfig()
          .map((c) => `  ${c.name.padEnd(28)} ${c.doc} (default: ${c.default || '""'})`)
          .join('\n') +
        '\n',
    );
  addServerCommands(program);
  addDatabaseCommands(program);
  addGenerateCommand(program);
  addKeysCommands(program);
  reportExits(program, PROGRAM);
  return program;
}

/** `start` and `serve`: the commands that keep running. */
function addServerCommands(program: Command): void {
  program
    .command('start')
    .description('serve on the configured database, first indexing a demo chain if it is empty')
    .action(async () => {
      const config = await serverConfiguration('both');
      await runServer(config, SERVED.both, (work, logger, shutdown) => work.start(config, logger, shutdown));
    });

  program
    .command('serve')
    .description('run the read API (public) and the event observer (loopback)')
    .addOption(new Option('--read-only', 'read API only: no observer, no writes, no migrations'))
    .addOption(new Option('--write-only', 'event observer only').conflicts('readOnly'))
    .action(async (options: { readOnly?: boolean; writeOnly?: boolean }) => {
      const mode = options.readOnly ? 'read-only' : options.writeOnly ? 'write-only' : 'both';
      const config = await serverConfiguration(mode);
      await runServer(config, SERVED[mode], (work, logger, shutdown) =>
        work.serve(config, mode, logger, shutdown),
      );
    });
}

/** `migrate`, `replay` and `export`: commands that open the configured database and exit. */
function addDatabaseCommands(program: Command): void {
  program
    .command('migrate')
    .description('apply database migrations (and load VESTING_FILE) and exit')
    .action(async () => {
      const config = await configuration();
      await (await commands()).migrate(config);
    });

  program
    .command('replay')
    .description('ingest a recorded event stream (TSV of the raw message log) through the observer path')
    .option('--file <path>', 'the TSV file to replay (required)')
    .action(async (options: { file?: string }) => {
      const file = required('--file <path>', options.file);
      await checkInputFile('--file', file);
      const config = await configuration();
      await (await commands()).replay(config, file);
    });

  program
    .command('export')
    .description('write the raw message log as a TSV that replay reads back')
    .option('--file <path>', 'the TSV file to write (required)')
    .action(async (options: { file?: string }) => {
      const file = required('--file <path>', options.file);
      await checkOutputFile('--file', file);
      const config = await configuration();
      await (await commands()).exportLog(config, file);
    });
}

/** `generate`: writes a chain to a file, no database. */
function addGenerateCommand(program: Command): void {
  program
    .command('generate')
    .description('write a deterministic generated chain (really signed txs) as a TSV that replay reads')
    .option('--out <path>', 'the TSV file to write (required)')
    .option('--blocks <n>', 'Stacks blocks', integerAtLeast(1), 100)
    .option('--accounts <n>', 'accounts (senders and recipients)', integerAtLeast(8), 100)
    .option('--seed <text>', 'seed: the same seed and sizes give the same file', '1')
    .option('--txs-per-block <n>', 'transactions per block', integerAtLeast(1), 20)
    .option(
      '--workers <n>',
      'signing threads (0: sign on the main thread; default: one per core)',
      integerAtLeast(0),
    )
    .option(
      '--nakamoto-height <h>',
      'enter epoch 3.0 (Nakamoto) at this height, or `none` for never (default: 40% in)',
      (text: string) => (text === 'none' ? ('none' as const) : integerAtLeast(2)(text)),
    )
    .action(async (options: GenerateOptions & { out?: string }) => {
      const { out, ...sizes } = options;
      await checkOutputFile('--out', required('--out <path>', out));
      await (await commands()).generate(sizes, out!);
    });
}

/** `keys create|list|revoke`. */
function addKeysCommands(program: Command): void {
  const keys = program
    .command('keys')
    .description('manage API keys (only their hashes are stored)')
    .usage('<create|list|revoke> [options]');
  keys
    .command('create')
    .description('create an API key; the key is printed once (stdout), only its hash is kept')
    .option('--label <label>', 'who or what the key is for (required)', nonEmpty('the label'))
    .action(async (options: { label?: string }) => {
      const label = required('--label <label>', options.label);
      const config = await configuration();
      exitCode = await (await commands()).keys(config, { action: 'create', label });
    });
  keys
    .command('list')
    .description('list API keys (id, label, created, last used, revoked)')
    .action(async () => {
      const config = await configuration();
      exitCode = await (await commands()).keys(config, { action: 'list' });
    });
  keys
    .command('revoke')
    .description(
      'revoke a key (refused at once by the server holding the directory; by every instance within 2 s)',
    )
    .argument('<id>', 'the key id (see keys list)', nonEmpty('the key id'))
    .action(async (id: string) => {
      const config = await configuration();
      exitCode = await (await commands()).keys(config, { action: 'revoke', id });
    });
}

/**
 * `command` and every command under it: usage errors and help come back to main as exceptions (printed
 * there), and a usage error is one line plus a hint naming that command's help.
 */
function reportExits(command: Command, path: string): void {
  command.exitOverride((err) => {
    throw new CommandLineExit(err, path);
  });
  command.configureOutput({ outputError: () => {} });
  command.showSuggestionAfterError(true);
  for (const sub of command.commands) reportExits(sub, `${path} ${sub.name()}`);
}

/** Commander's exit (help shown, or a usage error), with the command it concerns. */
class CommandLineExit extends Error {
  constructor(
    readonly error: CommanderError,
    readonly commandPath: string,
  ) {
    super(error.message);
  }
}

const hint = (commandPath: string) => `run '${commandPath} --help' for usage`;

/** Runs the command line; resolves with the exit code, or KEEP_RUNNING for a server. */
async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv, { from: 'user' });
    return exitCode;
  } catch (err) {
    if (err instanceof CommandLineExit) {
      if (err.error.exitCode === 0) return 0;
      // no command at all: the help was printed (on stderr)
      if (err.error.code === 'commander.help' || err.error.code === 'commander.helpDisplayed') return 2;
      process.stderr.write(`${oneLine(err.message)}\n${hint(err.commandPath)}\n`);
      return 2;
    }
    if (err instanceof UsageError) {
      process.stderr.write(`error: ${oneLine(err.message)}\n${hint(commandPathOf(program, argv))}\n`);
      return 2;
    }
    if (err instanceof OperatorError) {
      process.stderr.write(`error: ${oneLine(err.message)}\n`);
      return 2;
    }
    throw err;
  }
}

const oneLine = (text: string) => text.replace(/\s*\n\s*/g, ' ').trim();

/** `npm run cli -- keys create` for `['keys', 'create', '--label', 'x']`: the commands named in argv. */
function commandPathOf(program: Command, argv: string[]): string {
  let command = program;
  const path = [PROGRAM];
  for (const word of argv) {
    const sub = command.commands.find((c) => c.name() === word);
    if (!sub) break;
    command = sub;
    path.push(word);
  }
  return path.join(' ');
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== KEEP_RUNNING) process.exit(code);
  },
  (err: unknown) => {
    process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
