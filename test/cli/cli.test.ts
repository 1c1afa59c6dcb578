import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { checkPorts, PortError, serverAddressesOf } from '../../src/cli/ports.js';
import { serve } from '../../src/cli/serve.js';
import { loadConfig } from '../../src/config.js';
import { describeConfig } from '../../src/settings.js';
import { heavyModulesLoaded, runCli, type CliRun } from '../support/cli.js';
import { createTestDatabaseUrl, silentLogger, stopOwnCluster } from '../support/database.js';
import { freePort } from '../support/postgres.js';
import { serveConfig, serveEnv } from '../support/serve-config.js';

// The command line as a user meets it: help everywhere, usage errors in one line with a hint, arguments,
// settings and ports checked before any work (the database is never opened: its directory never appears,
// and the modules that would open it are never loaded).

const work = mkdtempSync(join(tmpdir(), 'cli-test-'));
after(() => rmSync(work, { recursive: true, force: true }));
after(stopOwnCluster);

/** A PGlite directory that must never be created by a command that fails its checks. */
const untouchedDatabase = () => join(work, `db-${Math.random().toString(36).slice(2)}`);

const COMMANDS = ['start', 'serve', 'migrate', 'replay', 'export', 'generate', 'keys'];
const KEYS_ACTIONS = ['create', 'list', 'revoke'];

const timings: { what: string; ms: number }[] = [];
after(() => {
  const summary = timings.map((t) => `${t.what} ${Math.round(t.ms)} ms`).join(', ');
  // Reported, not asserted: wall time on a loaded machine is not a test.
  process.stdout.write(`# cli timings: ${summary}\n`);
});

function assertLight(run: CliRun, what: string) {
  assert.deepEqual(heavyModulesLoaded(run), [], `${what} loaded heavy modules`);
  assert.ok(
    run.modules.some((url) => url.endsWith('/dist/cli/main.js')),
    'the module trace works',
  );
  timings.push({ what, ms: run.ms });
}

describe('help', () => {
  test('--help, -h and help list every command and every setting, and load nothing heavy', async () => {
    for (const args of [['--help'], ['-h'], ['help']]) {
      const run = await runCli(args);
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stderr, '');
      assert.match(run.stdout, /^Usage: stacks-read-api <command> \[options\]\n/);
      for (const command of COMMANDS) assert.match(run.stdout, new RegExp(`^  ${command}\\b`, 'm'), command);
      for (const setting of describeConfig())
        assert.match(run.stdout, new RegExp(`^  ${setting.name} `, 'm'));
      assertLight(run, args.join(' '));
    }
  });

  test('every command (and keys action) has its own help: --help, -h, help <command>', async () => {
    const cases = [
      ...COMMANDS.map((c) => [c, '--help']),
      ...KEYS_ACTIONS.map((a) => ['keys', a, '--help']),
      ['replay', '-h'],
      ['help', 'generate'],
      ['keys', 'help', 'revoke'],
      ['keys', 'create', '-h'],
    ];
    for (const args of cases) {
      const words = args.filter((w) => !w.startsWith('-') && w !== 'help');
      const run = await runCli(args);
      assert.equal(run.code, 0, `${args.join(' ')}: ${run.stderr}`);
      const usage = `Usage: stacks-read-api ${words.join(' ')} `;
      assert.ok(run.stdout.startsWith(usage), `${args.join(' ')}: ${run.stdout.slice(0, 200)}`);
      assertLight(run, args.join(' '));
    }
    const replay = await runCli(['replay', '--help']);
    assert.match(replay.stdout, /^ {2}--file <path> +the TSV file to replay \(required\)$/m);
    const generate = await runCli(['generate', '--help']);
    for (const option of [
      '--out <path>',
      '--blocks <n>',
      '--accounts <n>',
      '--seed <text>',
      '--txs-per-block <n>',
      '--workers <n>',
      '--nakamoto-height <h>',
    ])
      assert.ok(generate.stdout.includes(option), option);
  });
});

describe('usage errors: one line, a hint, exit 2, before any work', () => {
  const missing = () => join(work, 'missing.tsv');
  const cases: { args: () => string[]; error: string | RegExp; hint: string }[] = [
    { args: () => ['--bogus'], error: "error: unknown option '--bogus'", hint: 'stacks-read-api' },
    { args: () => ['frobnicate'], error: "error: unknown command 'frobnicate'", hint: 'stacks-read-api' },
    {
      args: () => ['replay', '--fil', 'x.tsv'],
      error: "error: unknown option '--fil' (Did you mean --file?)",
      hint: 'stacks-read-api replay',
    },
    {
      args: () => ['replay'],
      error: "error: required option '--file <path>' not specified",
      hint: 'stacks-read-api replay',
    },
    {
      args: () => ['replay', '--file', missing()],
      error: `error: --file ${missing()}: no such file or directory`,
      hint: 'stacks-read-api replay',
    },
    {
      args: () => ['replay', '--file', work],
      error: `error: --file ${work}: not a file`,
      hint: 'stacks-read-api replay',
    },
    {
      args: () => ['export', '--file', join(work, 'no', 'dir', 'x.tsv')],
      error: `error: --file ${join(work, 'no', 'dir', 'x.tsv')}: directory ${join(work, 'no', 'dir')}: no such file or directory`,
      hint: 'stacks-read-api export',
    },
    {
      args: () => ['generate', '--out', 'no/such/dir/x.tsv'],
      error: 'error: --out no/such/dir/x.tsv: directory no/such/dir: no such file or directory',
      hint: 'stacks-read-api generate',
    },
    {
      args: () => ['generate', '--out', work],
      error: `error: --out ${work}: is a directory`,
      hint: 'stacks-read-api generate',
    },
    {
      args: () => ['generate', '--out', join(work, 'x.tsv'), '--blocks', '0'],
      error: "error: option '--blocks <n>' argument '0' is invalid. an integer >= 1 is expected",
      hint: 'stacks-read-api generate',
    },
    {
      args: () => ['generate', '--out', join(work, 'x.tsv'), '--accounts', '1e3'],
      error: "error: option '--accounts <n>' argument '1e3' is invalid. an integer >= 8 is expected",
      hint: 'stacks-read-api generate',
    },
    {
      args: () => ['generate', '--out', join(work, 'x.tsv'), '--nakamoto-height', '1'],
      error: "error: option '--nakamoto-height <h>' argument '1' is invalid. an integer >= 2 is expected",
      hint: 'stacks-read-api generate',
    },
    {
      args: () => ['generate'],
      error: "error: required option '--out <path>' not specified",
      hint: 'stacks-read-api generate',
    },
    {
      args: () => ['serve', '--read-only', '--write-only'],
      error: "error: option '--write-only' cannot be used with option '--read-only'",
      hint: 'stacks-read-api serve',
    },
    {
      args: () => ['keys', 'create'],
      error: "error: required option '--label <label>' not specified",
      hint: 'stacks-read-api keys create',
    },
    {
      args: () => ['keys', 'create', '--label', '  '],
      error: "error: option '--label <label>' argument '  ' is invalid. the label cannot be empty",
      hint: 'stacks-read-api keys create',
    },
    {
      args: () => ['keys', 'revoke'],
      error: "error: missing required argument 'id'",
      hint: 'stacks-read-api keys revoke',
    },
    {
      args: () => ['keys', 'rotate'],
      error: "error: unknown command 'rotate' (Did you mean create?)",
      hint: 'stacks-read-api keys',
    },
    {
      args: () => ['migrate', 'now'],
      error: "error: too many arguments for 'migrate'. Expected 0 arguments but got 1.",
      hint: 'stacks-read-api migrate',
    },
  ];

  for (const { args, error, hint } of cases) {
    test(args().join(' ') || '(none)', async () => {
      const database = untouchedDatabase();
      const run = await runCli(args(), { env: { PGLITE_DIR: database } });
      assert.equal(run.code, 2, run.stderr);
      assert.equal(run.stdout, '');
      const lines = run.stderr.split('\n');
      assert.deepEqual(lines, [lines[0], `run '${hint} --help' for usage`, ''], run.stderr);
      if (typeof error === 'string') assert.equal(lines[0], error);
      else assert.match(lines[0], error);
      assert.equal(existsSync(database), false, 'the database was not opened');
      assertLight(run, args()[0]);
    });
  }

  test('no command: the help, on stderr, exit 2', async () => {
    const run = await runCli([]);
    assert.equal(run.code, 2);
    assert.equal(run.stdout, '');
    assert.match(run.stderr, /^Usage: stacks-read-api <command> \[options\]\n/);
    assertLight(run, '(no command)');
  });
});

describe('settings and ports: checked before the database is opened', () => {
  let busy: Server;
  let busyPort: number;
  before(async () => {
    busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    busyPort = (busy.address() as { port: number }).port;
  });
  after(() => new Promise<void>((resolve) => busy.close(() => resolve())));

  /** Every server on a free port, metrics on. */
  const serverEnv = async (env: Record<string, string>) =>
    serveEnv({
      API_PORT: String(await freePort()),
      OBSERVER_PORT: String(await freePort()),
      METRICS_ENABLED: 'true',
      METRICS_PORT: String(await freePort()),
      ...env,
    });

  /** A server command that must stop at once with `error`, loading no store, API or ingest module. */
  async function refused(args: string[], env: Record<string, string>, error: string) {
    const database = untouchedDatabase();
    const run = await runCli(args, { env: { ...env, PGLITE_DIR: database } });
    assert.equal(run.code, 2, run.stderr + run.stdout);
    assert.equal(run.stderr, `error: ${error}\n`);
    assert.equal(existsSync(database), false, 'the database was not opened');
    assert.deepEqual(heavyModulesLoaded(run), []);
    timings.push({ what: `${args[0]} refused`, ms: run.ms });
  }

  test('a DATABASE_URL that is not a postgres:// URL: one line, and its password is not repeated', async () => {
    const doc = describeConfig().find((c) => c.name === 'DATABASE_URL')!.doc;
    for (const url of ['mysql://reader:hunter2@db/chain', 'postgres://reader:hunter2@[db/chain', 'hunter2']) {
      await refused(
        ['migrate'],
        { DATABASE_URL: url },
        `DATABASE_URL: expected a postgres://user:password@host:port/database URL (${doc})`,
      );
    }
  });

  test('a bad setting names its variable', async () => {
    await refused(
      ['serve'],
      await serverEnv({ API_PORT: 'abc' }),
      'API_PORT="abc": must be integer (public read API port)',
    );
    await refused(
      ['migrate'],
      { METRICS_ENABLED: 'maybe' },
      'METRICS_ENABLED="maybe": must be boolean (serve Prometheus metrics on METRICS_HOST:METRICS_PORT (GET /metrics))',
    );
  });

  test('two servers on one port', async () => {
    const env = await serverEnv({});
    await refused(
      ['serve'],
      { ...env, OBSERVER_PORT: env.API_PORT },
      `OBSERVER_PORT and API_PORT are both ${env.API_PORT}: each server needs its own port`,
    );
    await refused(
      ['start'],
      { ...env, METRICS_PORT: env.OBSERVER_PORT },
      `OBSERVER_PORT and METRICS_PORT are both ${env.OBSERVER_PORT}: each server needs its own port`,
    );
  });

  test('a port in use, for each server and mode', async () => {
    const inUse = (variable: string) =>
      `${variable}=${busyPort}: 127.0.0.1:${busyPort} is already in use (another process listens there); choose a free port with ${variable}`;
    await refused(['serve'], await serverEnv({ API_PORT: String(busyPort) }), inUse('API_PORT'));
    await refused(['start'], await serverEnv({ OBSERVER_PORT: String(busyPort) }), inUse('OBSERVER_PORT'));
    await refused(
      ['serve', '--read-only'],
      await serverEnv({ METRICS_HOST: '127.0.0.1', METRICS_PORT: String(busyPort) }),
      inUse('METRICS_PORT'),
    );
  });

  test('every busy port at once, in one line', async () => {
    const others = [createServer(), createServer()];
    for (const server of others) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const [observerPort, metricsPort] = others.map((server) => (server.address() as { port: number }).port);
    try {
      await refused(
        ['start'],
        serveEnv({
          API_PORT: String(busyPort),
          OBSERVER_PORT: String(observerPort),
          METRICS_ENABLED: 'true',
          METRICS_PORT: String(metricsPort),
        }),
        `OBSERVER_PORT=${observerPort}, API_PORT=${busyPort}, METRICS_PORT=${metricsPort}: ` +
          `127.0.0.1:${observerPort}, 127.0.0.1:${busyPort}, 127.0.0.1:${metricsPort} are already in use ` +
          '(other processes listen there); choose free ports with OBSERVER_PORT, API_PORT, METRICS_PORT',
      );
      // a shared port and a busy one: both said
      await refused(
        ['serve'],
        serveEnv({ API_PORT: String(busyPort), METRICS_ENABLED: 'true', METRICS_PORT: String(busyPort) }),
        `API_PORT and METRICS_PORT are both ${busyPort}: each server needs its own port; ` +
          `API_PORT=${busyPort}: 127.0.0.1:${busyPort} is already in use (another process listens there); ` +
          'choose a free port with API_PORT',
      );
    } finally {
      for (const server of others) await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  test('servers a mode does not open are not checked', async () => {
    const config = loadConfig({ API_PORT: '3999', OBSERVER_PORT: '3999', METRICS_ENABLED: 'false' });
    assert.deepEqual(serverAddressesOf(config, 'write-only'), [
      { variable: 'OBSERVER_PORT', host: '127.0.0.1', port: 3999 },
    ]);
    assert.deepEqual(serverAddressesOf(config, 'read-only'), [
      { variable: 'API_PORT', host: '0.0.0.0', port: 3999 },
    ]);
    await checkPorts(
      loadConfig({ API_PORT: String(busyPort), METRICS_PORT: '0', OBSERVER_PORT: '0' }),
      'write-only',
    );
    await assert.rejects(
      checkPorts(loadConfig({ API_PORT: String(busyPort), METRICS_PORT: '0', OBSERVER_PORT: '0' }), 'both'),
      (err: unknown) => err instanceof PortError && err.message.startsWith(`API_PORT=${busyPort}: `),
    );
    // port 0 (any free port) is never a conflict
    await checkPorts(loadConfig({ API_PORT: '0', OBSERVER_PORT: '0', METRICS_PORT: '0' }), 'both');
  });

  test('a port taken after the check: serve names the variable too', async () => {
    const config = serveConfig({ DATABASE_URL: await createTestDatabaseUrl(), API_PORT: String(busyPort) });
    await assert.rejects(
      serve(config, silentLogger, 'both'),
      (err: unknown) =>
        err instanceof PortError &&
        err.message ===
          `API_PORT=${busyPort}: 127.0.0.1:${busyPort} is already in use (another process listens there); choose a free port with API_PORT`,
    );
  });
});

describe('a database that cannot be reached: one line naming it, exit 2', () => {
  test('a refused port, a database that does not exist; for migrate and serve', async () => {
    const closedPort = await freePort();
    const existing = new URL(await createTestDatabaseUrl());
    const missing = `postgres://${existing.username}@${existing.host}/no_such_database`;
    const cases = [
      {
        url: `postgres://reader:hunter2@127.0.0.1:${closedPort}/chain`,
        error: `cannot connect to the database at postgres://127.0.0.1:${closedPort}/chain: connect ECONNREFUSED 127.0.0.1:${closedPort}`,
      },
      {
        url: missing,
        error: `cannot connect to the database at postgres://${existing.hostname}:${existing.port}/no_such_database: database "no_such_database" does not exist`,
      },
    ];
    for (const { url, error } of cases) {
      for (const args of [['migrate'], ['serve']]) {
        const run = await runCli(args, {
          env: serveEnv({ DATABASE_URL: url }),
        });
        assert.equal(run.code, 2, run.stderr);
        assert.equal(run.stderr, `error: ${error}\n`);
      }
    }
  });
});

describe('replay of a file that is not a recorded event stream: one line, exit 2', () => {
  // On PostgreSQL: what is checked is the file, and a PGlite directory would cost each run seconds of opening.
  let databaseUrl: string;
  before(async () => {
    databaseUrl = await createTestDatabaseUrl();
  });
  const cases = [
    {
      name: 'a line without four columns',
      content: 'not a recorded message\n',
      message: 'line 1: expected 4 tab-separated columns (id, timestamp, path, payload)',
    },
    {
      name: 'a timestamp that is not one',
      content: '7\tyesterday\t/new_block\t{}\n',
      message: 'line 1: unreadable timestamp "yesterday"',
    },
    {
      name: 'a payload that is not JSON',
      content: '7\t2024-01-01 00:00:00+00\t/new_block\t{"block_height": \n',
      message: 'message 7 (/new_block) failed: /new_block: body is not valid JSON',
    },
  ];
  for (const { name, content, message } of cases) {
    test(name, async () => {
      const file = join(work, 'input.tsv');
      writeFileSync(file, content);
      const run = await runCli(['replay', '--file', file], { env: serveEnv({ DATABASE_URL: databaseUrl }) });
      assert.equal(run.code, 2, run.stderr);
      const lines = run.stderr.trim().split('\n');
      assert.equal(lines.length, 1, run.stderr);
      assert.ok(lines[0].startsWith(`error: ${file}: ${message}`), lines[0]);
      assert.ok(lines[0].endsWith('the messages before it are applied, replay a corrected file to go on'));
    });
  }
});
