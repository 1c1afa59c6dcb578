// `npm run bench:compare`: is a change faster or slower than its base, endpoint by endpoint?
//
// The two sides' code each runs in its own processes: the base ref is checked out in a temporary git worktree
// (its node_modules a link to this checkout's when package-lock.json is the same, else `npm ci` there), and
// each side replays the same generated chain with its own migrations and ingest (`src/cli/main.ts replay`)
// into its own database of ONE throwaway PostgreSQL cluster, then serves it with its own `serve --read-only`.
// Every HTTP case of the suite (bench/http.ts) is then loaded on A and on B in turn, round after round (A, B
// in odd rounds, B, A in even ones, so a drift of the machine's load hits both sides alike). The machine is
// shared: absolute figures move with other people's work, and only the interleaving makes the two sides
// comparable. A case is called slower (or faster) only when the ratio of the medians leaves the noise band,
// the spread seen between rounds of the same side.
//
//   npm run bench:compare -- --base <ref> [--head <ref>] [--only ten|beyond] [--cases <text,...>] [--chain tiny,small]
//                            [--rounds 3] [--seconds 5] [--warmup 1] [--connections 32] [--durability off|full]
//                            [--keep-worktrees]
//
// --only picks the family of cases (bench/http.ts: the ten endpoints of the first contract, the default, or the
// routes beyond them), --cases those of it whose names hold one of the texts. --head defaults to this working
// tree (uncommitted changes included). Writes bench/results/compare-latest.md and prints it.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { startPostgres } from '../test/support/postgres.js';
import {
  BARE_CEILING,
  LOOKUP_CEILING,
  type CaseFamily,
  httpCases,
  runCase,
  selectInputs,
  startServer,
  type HttpCase,
  type HttpResult,
  type Server,
} from './http.js';
import {
  BENCH_CHAINS,
  BENCH_SEED,
  benchChain,
  DURABILITY,
  postmasterPid,
  SERVER_SETTINGS,
} from './ingest.js';
import { format, writeFormatted } from './markdown.js';

const { values } = parseArgs({
  options: {
    base: { type: 'string' },
    head: { type: 'string' },
    cases: { type: 'string' },
    only: { type: 'string', default: 'ten' },
    chain: { type: 'string', default: 'tiny,small' },
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '5' },
    warmup: { type: 'string', default: '1' },
    connections: { type: 'string', default: '32' },
    durability: { type: 'string', default: 'off' },
    'keep-worktrees': { type: 'boolean', default: false },
  },
});

const here = import.meta.dirname;
const checkout = join(here, '..');
const log = (text: string) => process.stderr.write(`${text}\n`);
const load = () => loadavg().map((l) => Math.round(l * 100) / 100);
const git = (...args: string[]) => execFileSync('git', args, { cwd: checkout, encoding: 'utf8' }).trim();

/** One side of the comparison: the code of one commit (or of this working tree) in its own directory. */
interface Side {
  label: 'A' | 'B';
  ref: string;
  /** commit, with "+ working tree" when it is this checkout with uncommitted changes */
  commit: string;
  dir: string;
  /** a temporary worktree to remove at the end */
  temporary: boolean;
}

function usage(message: string): never {
  process.stderr.write(
    `${message}\nusage: npm run bench:compare -- --base <ref> [--head <ref>] [--only ten|beyond] [--cases <text,...>] ` +
      `[--chain tiny,small] [--rounds 3] [--seconds 5] [--warmup 1] [--connections 32] [--durability off|full]\n`,
  );
  process.exit(2);
}

function positiveInteger(name: string, text: string, min: number): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < min) usage(`--${name}: an integer >= ${min} is expected, got "${text}"`);
  return n;
}

function resolveCommit(ref: string): string {
  try {
    return git('rev-parse', '--verify', '--quiet', `${ref}^{commit}`);
  } catch {
    usage(`not a commit: "${ref}"`);
  }
}

/**
 * A worktree of `ref` at a temporary path. Its node_modules is a link to this checkout's when both lock
 * files are the same (the usual case: minutes of `npm ci` saved), else installed there.
 */
function checkOut(label: Side['label'], ref: string): Side {
  const commit = resolveCommit(ref);
  const dir = mkdtempSync(join(tmpdir(), `bench-compare-${commit.slice(0, 8)}-`));
  rmSync(dir, { recursive: true });
  git('worktree', 'add', '--detach', dir, commit);
  const lock = (root: string) => readFileSync(join(root, 'package-lock.json'), 'utf8');
  if (lock(dir) === lock(checkout)) {
    symlinkSync(join(checkout, 'node_modules'), join(dir, 'node_modules'), 'dir');
  } else {
    log(`${label} (${ref}): package-lock.json differs from this checkout's: npm ci there`);
    execFileSync('npm', ['ci', '--no-audit', '--no-fund'], {
      cwd: dir,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  }
  return { label, ref, commit: commit.slice(0, 10), dir, temporary: true };
}

function workingTree(): Side {
  const commit = git('rev-parse', 'HEAD').slice(0, 10);
  const dirty = git('status', '--porcelain', '--untracked-files=no', '--', 'src', 'bench') !== '';
  return {
    label: 'B',
    ref: 'working tree',
    commit: dirty ? `${commit} + uncommitted changes` : commit,
    dir: checkout,
    temporary: false,
  };
}

function removeWorktree(side: Side) {
  if (!side.temporary || values['keep-worktrees']) return;
  try {
    git('worktree', 'remove', '--force', side.dir);
  } catch (err) {
    log(`could not remove the worktree ${side.dir}: ${(err as Error).message}`);
  }
}

interface ReplayResult {
  seconds: number;
  blocks: number;
}

/**
 * Replays `file` into the empty database at `url` with the side's own code (`replay` migrates first), in a
 * child process; its figures come from the "replay finished" log line.
 */
async function replayWith(side: Side, url: string, file: string): Promise<ReplayResult> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'replay', '--file', file], {
    cwd: side.dir,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, DATABASE_URL: url, LOG_LEVEL: 'info', NODE_ENV: 'production' },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`${side.label} replay exited with ${code}: ${stderr.slice(-2000)}`);
  for (const line of stdout.split('\n')) {
    if (!line.startsWith('{')) continue;
    const entry = JSON.parse(line) as { msg?: string; seconds?: number; blocks?: number };
    if (entry.msg === 'replay finished')
      return { seconds: entry.seconds ?? NaN, blocks: entry.blocks ?? NaN };
  }
  throw new Error(`${side.label} replay printed no "replay finished" line`);
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};
/** (max - min) / median: how far apart the rounds of one side landed */
const spread = (xs: number[]) => (xs.length < 2 ? NaN : (Math.max(...xs) - Math.min(...xs)) / median(xs));
const cpuPerRequest = (r: HttpResult) =>
  r.requests > 0 ? ((r.cpuSeconds.server + r.cpuSeconds.postgres) * 1e6) / r.requests : NaN;

interface CaseComparison {
  name: string;
  a: HttpResult[];
  b: HttpResult[];
}

interface ChainComparison {
  label: string;
  txs: number;
  busiest: number;
  ingest: Record<Side['label'], ReplayResult>;
  cases: CaseComparison[];
  /** the bare Fastify route, once per round: how much the machine itself moved between rounds */
  bare: HttpResult[];
  loadPerRound: number[][];
}

async function compareChain(
  label: keyof typeof BENCH_CHAINS,
  sides: [Side, Side],
  cluster: Awaited<ReturnType<typeof startPostgres>>,
  options: {
    rounds: number;
    seconds: number;
    warmup: number;
    connections: number;
    family: CaseFamily;
    filter: string[];
  },
): Promise<ChainComparison> {
  const { file } = await benchChain({ ...BENCH_CHAINS[label], seed: BENCH_SEED, dir: join(here, 'out') });
  const pgPid = postmasterPid(cluster);
  const urls = {} as Record<Side['label'], string>;
  const ingest = {} as Record<Side['label'], ReplayResult>;
  for (const side of sides) {
    urls[side.label] = await cluster.createDatabase(`compare_${label}_${side.label.toLowerCase()}`);
    ingest[side.label] = await replayWith(side, urls[side.label], file);
    log(`${label}: ${side.label} replayed in ${ingest[side.label].seconds.toFixed(1)} s`);
    const sql = postgres(urls[side.label], { max: 1, onnotice: () => {} });
    await sql`VACUUM ANALYZE`;
    await sql.end();
  }
  // one set of inputs for both sides (the same chain: the same ids), picked from B's database
  const sql = postgres(urls.B, { max: 1, onnotice: () => {} });
  const inputs = await selectInputs(sql as never);
  const [{ n: txs }] = await sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM txs WHERE canonical AND microblock_canonical AND index_block_hash <> ''`;
  await sql.end();
  const all = httpCases(inputs);
  const bareCase = all.find((c) => c.endpoint === BARE_CEILING)!;
  const cases: HttpCase[] = all.filter(
    (c) =>
      c.endpoint !== BARE_CEILING &&
      c.endpoint !== LOOKUP_CEILING &&
      c.family === options.family &&
      (options.filter.length === 0 || options.filter.some((f) => c.name.toLowerCase().includes(f))),
  );
  if (cases.length === 0) usage(`--cases matches none of: ${all.map((c) => c.name).join('; ')}`);

  const servers = {} as Record<Side['label'], Server>;
  let ceiling: Server | undefined;
  const result: ChainComparison = {
    label,
    txs,
    busiest: inputs.busy.txCount,
    ingest,
    cases: cases.map((c) => ({ name: c.name, a: [], b: [] })),
    bare: [],
    loadPerRound: [],
  };
  try {
    for (const side of sides) servers[side.label] = await startServer('api', urls[side.label], side.dir);
    ceiling = await startServer('ceiling', urls.B);
    const run = (server: Server, c: HttpCase) =>
      runCase(server.base, c, {
        seconds: options.seconds,
        warmupSeconds: options.warmup,
        connections: options.connections,
        serverPid: server.pid,
        pgPid,
      });
    for (let round = 0; round < options.rounds; round++) {
      result.loadPerRound.push(load());
      result.bare.push(await run(ceiling, bareCase));
      const order = round % 2 === 0 ? sides : ([sides[1], sides[0]] as const);
      for (const [i, c] of cases.entries()) {
        for (const side of order) {
          const r = await run(servers[side.label], c);
          (side.label === 'A' ? result.cases[i].a : result.cases[i].b).push(r);
          log(
            `${label} round ${round + 1}/${options.rounds} | ${side.label} | ${c.name}: ${r.reqPerSec} req/s, ` +
              `p50 ${r.latencyMs.p50} ms, p99 ${r.latencyMs.p99} ms` +
              (r.non2xx || r.errors ? `, ${r.non2xx} non-2xx, ${r.errors} errors` : ''),
          );
        }
      }
    }
  } finally {
    for (const server of Object.values(servers)) await server.stop();
    await ceiling?.stop();
  }
  return result;
}

const fmt = (n: number, digits = 0) =>
  Number.isFinite(n)
    ? n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
    : '–';
const rounds = (ratios: number[]) => ratios.map((r) => fmt(r, 2)).join(' ');
const pct = (x: number) => (Number.isFinite(x) ? `${Math.round(x * 100)}%` : '–');

/** A difference smaller than this in every round is not called one (5%). */
const MIN_EFFECT = 0.05;

/**
 * B against A on one measure. Two tests, as the load of a shared machine moves both ways:
 * - medians over the rounds, called worse or better only beyond the larger of the two sides' spreads between
 *   rounds (with one round there is no spread, so no verdict);
 * - paired rounds: A and B of one round ran next to each other, under nearly the same load, so B/A per round
 *   cancels the drift between rounds; worse (better) "in every round" when each round's B/A is beyond
 *   1 ∓ MIN_EFFECT the same way (with 3 rounds, chance alone does that 1 time in 8 each way).
 * `higherIsBetter`: req/s yes, CPU per request no.
 */
function judge(a: number[], b: number[], higherIsBetter: boolean) {
  const ratio = median(b) / median(a);
  const noise = Math.max(spread(a), spread(b));
  const paired = a.map((x, i) => b[i] / x);
  const worseBy = (r: number, margin: number) => (higherIsBetter ? r < 1 - margin : r > 1 + margin);
  const betterBy = (r: number, margin: number) => (higherIsBetter ? r > 1 + margin : r < 1 - margin);
  const text = !Number.isFinite(noise)
    ? 'no verdict'
    : worseBy(ratio, noise)
      ? '**worse**'
      : betterBy(ratio, noise)
        ? 'better'
        : paired.every((r) => worseBy(r, MIN_EFFECT))
          ? '**worse in every round**'
          : paired.every((r) => betterBy(r, MIN_EFFECT))
            ? 'better in every round'
            : 'same';
  return { ratio, noise, paired, text };
}

function verdicts(c: CaseComparison) {
  const failures = [...c.a, ...c.b].reduce((n, r) => n + r.non2xx + r.errors, 0);
  return {
    throughput: judge(
      c.a.map((r) => r.reqPerSec),
      c.b.map((r) => r.reqPerSec),
      true,
    ),
    cpu: judge(c.a.map(cpuPerRequest), c.b.map(cpuPerRequest), false),
    failures,
  };
}

function renderMarkdown(report: {
  date: string;
  sides: [Side, Side];
  options: { rounds: number; seconds: number; warmup: number; connections: number; durability: string };
  loadBefore: number[];
  loadAfter: number[];
  minutes: number;
  chains: ChainComparison[];
}): string {
  const [a, b] = report.sides;
  const o = report.options;
  const lines = [
    '# Before/after comparison (`npm run bench:compare`)',
    '',
    `Run of ${report.date.slice(0, 16).replace('T', ' ')} UTC, ${report.minutes} min. ` +
      `**A** = \`${a.ref}\` (${a.commit}), **B** = \`${b.ref}\` (${b.commit}).`,
    `Each side replays the same chain with its own code into its own database of one PostgreSQL cluster ` +
      `(durability ${o.durability}; ${SERVER_SETTINGS.join(', ')}) and serves it with its own \`serve --read-only\`. ` +
      `Per case and round: ${o.warmup} s warm-up, then ${o.seconds} s of autocannon with ${o.connections} connections; ` +
      `${o.rounds} rounds, A then B in odd rounds, B then A in even ones. Figures are medians over the rounds; ` +
      `"noise" is the larger of the two sides' spreads between rounds ((max − min) / median), and B is called worse or ` +
      `better when the medians' B/A leaves 1 ± noise, or when B/A of every round (A and B of a round ran side by side) ` +
      `is beyond 1 ∓ ${MIN_EFFECT * 100}% the same way; judged on req/s and on CPU µs per request (the API process plus ` +
      `PostgreSQL: the steadier figure on a loaded machine, as it counts work, not waiting).`,
    `Load average (1/5/15 min) before: ${report.loadBefore.join(' / ')}, after: ${report.loadAfter.join(' / ')} ` +
      `(2 cores, shared with other work).`,
  ];
  for (const chain of report.chains) {
    const bare = chain.bare.map((r) => r.reqPerSec);
    lines.push(
      '',
      `## ${chain.label} chain (${fmt(chain.txs)} txs; busiest account ${fmt(chain.busiest)} txs)`,
      '',
      `Replay (one run each, not interleaved): A ${chain.ingest.A.seconds.toFixed(1)} s, B ${chain.ingest.B.seconds.toFixed(1)} s ` +
        `(${chain.ingest.B.blocks} blocks). Bare Fastify route (the machine's own ceiling) per round: ` +
        `${bare.map((n) => fmt(n)).join(', ')} req/s (spread ${pct(spread(bare))}); ` +
        `1-min load average per round: ${chain.loadPerRound.map((l) => l[0]).join(', ')}.`,
      '',
      '| case | A req/s | B req/s | B/A | per round | noise | req/s | A p50 / p99 ms | B p50 / p99 ms | CPU µs/req A → B | B/A | per round | noise | CPU |',
      '| ---- | ------: | ------: | --: | --------: | ----: | ----- | -------------: | -------------: | ---------------: | --: | --------: | ----: | --- |',
    );
    for (const c of chain.cases) {
      const v = verdicts(c);
      const side = (rs: HttpResult[]) => ({
        req: median(rs.map((r) => r.reqPerSec)),
        p50: median(rs.map((r) => r.latencyMs.p50)),
        p99: median(rs.map((r) => r.latencyMs.p99)),
        cpu: median(rs.map(cpuPerRequest)),
      });
      const sa = side(c.a);
      const sb = side(c.b);
      const t = v.throughput;
      lines.push(
        `| ${c.name} | ${fmt(sa.req)} | ${fmt(sb.req)} | ${fmt(t.ratio, 2)} | ${rounds(t.paired)} | ±${pct(t.noise)} | ${t.text} | ` +
          `${fmt(sa.p50)} / ${fmt(sa.p99)} | ${fmt(sb.p50)} / ${fmt(sb.p99)} | ${fmt(sa.cpu)} → ${fmt(sb.cpu)} | ` +
          `${fmt(v.cpu.ratio, 2)} | ${rounds(v.cpu.paired)} | ±${pct(v.cpu.noise)} | ${v.cpu.text}` +
          `${v.failures > 0 ? ` (${v.failures} non-2xx/errors)` : ''} |`,
      );
    }
  }
  lines.push('');
  return lines.join('\n');
}

function family(only: string): CaseFamily {
  if (only !== 'ten' && only !== 'beyond') usage(`--only: ten or beyond, got "${only}"`);
  return only as CaseFamily;
}

async function main() {
  if (!values.base) usage('--base <ref> is required');
  const durability = DURABILITY[values.durability];
  if (!durability) usage('--durability is off or full');
  const chainLabels = values.chain.split(',').map((c) => c.trim());
  for (const c of chainLabels) if (c !== 'tiny' && c !== 'small') usage(`--chain: tiny or small, got "${c}"`);
  const options = {
    rounds: positiveInteger('rounds', values.rounds, 1),
    seconds: positiveInteger('seconds', values.seconds, 1),
    warmup: positiveInteger('warmup', values.warmup, 0),
    connections: positiveInteger('connections', values.connections, 1),
    durability: values.durability,
    family: family(values.only),
    filter: (values.cases ?? '')
      .split(',')
      .map((f) => f.trim().toLowerCase())
      .filter(Boolean),
  };
  const started = Date.now();
  const loadBefore = load();
  const sides: Side[] = [];
  // a run stopped by hand still removes its worktrees (the servers, in the same process group, stop too)
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      for (const side of sides) removeWorktree(side);
      process.exit(130);
    });
  }
  try {
    sides.push(checkOut('A', values.base));
    sides.push(values.head ? checkOut('B', values.head) : workingTree());
    log(`A = ${sides[0].ref} (${sides[0].commit}) in ${sides[0].dir}`);
    log(`B = ${sides[1].ref} (${sides[1].commit}) in ${sides[1].dir}`);
    const cluster = await startPostgres({
      fsync: durability.fsync,
      settings: [...SERVER_SETTINGS, ...durability.settings],
    });
    const chains: ChainComparison[] = [];
    try {
      for (const label of chainLabels as (keyof typeof BENCH_CHAINS)[]) {
        chains.push(await compareChain(label, sides as [Side, Side], cluster, options));
      }
    } finally {
      await cluster.stop();
    }
    const markdown = renderMarkdown({
      date: new Date().toISOString(),
      sides: sides as [Side, Side],
      options,
      loadBefore,
      loadAfter: load(),
      minutes: Math.round(((Date.now() - started) / 60000) * 10) / 10,
      chains,
    });
    // every round's figures, to read again or render otherwise (bench/out is not committed)
    writeFileSync(
      join(here, 'out', 'compare-latest.json'),
      JSON.stringify({ sides, options, loadBefore, chains }, null, 2),
    );
    const out = join(here, 'results', 'compare-latest.md');
    await writeFormatted(out, markdown);
    process.stdout.write(await format(out, markdown));
  } finally {
    for (const side of sides) removeWorktree(side);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
