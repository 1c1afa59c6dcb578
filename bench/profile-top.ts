// The top self-time functions, and files/packages, of a V8 CPU profile (`node --cpu-prof`), as Markdown.
//
//   npx tsx bench/profile-top.ts <file.cpuprofile> [--top 30]
//
// e.g. the indexer during an ingest: `node --cpu-prof --cpu-prof-dir=bench/out/prof --import tsx bench/ingest.ts`,
// or the API under load: BENCH_SERVER_NODE_OPTIONS="--cpu-prof --cpu-prof-dir=bench/out/prof" (bench/http.ts).
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** Where a script belongs: a package of node_modules, a file of this repository, or Node itself. */
function owner(url: string): string {
  if (url === '') return '(V8 / native)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1];
  if (url.startsWith('node:')) return url;
  const local = /\/((?:src|bench|test|scripts)\/.*)$/.exec(url);
  return local ? local[1] : url;
}

/** The profile's top `top` functions and packages by self time, as Markdown tables. */
export function topOfProfile(file: string, top: number): string {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  // timeDeltas[i] is the time before sample i; the sample's node ran for it
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const total = profile.endTime - profile.startTime;
  const functions = new Map<string, number>();
  const owners = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    const where = owner(url);
    const key = `${functionName || '(anonymous)'} ${where}${url ? `:${lineNumber + 1}` : ''}`;
    functions.set(key, (functions.get(key) ?? 0) + us);
    owners.set(where, (owners.get(where) ?? 0) + us);
  }
  const rows = (m: Map<string, number>) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, us]) => `| ${(us / 1000).toFixed(0)} | ${((us / total) * 100).toFixed(1)}% | \`${k}\` |`);
  return [
    `Profile ${file}: ${(total / 1e6).toFixed(1)} s, ${profile.samples.length} samples.`,
    '',
    '| self ms | share | function (file:line) |',
    '| ------: | ----: | -------------------- |',
    ...rows(functions),
    '',
    '| self ms | share | package or file |',
    '| ------: | ----: | --------------- |',
    ...rows(owners),
    '',
  ].join('\n');
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { top: { type: 'string', default: '30' } },
  });
  if (positionals.length !== 1) {
    process.stderr.write('usage: npx tsx bench/profile-top.ts <file.cpuprofile> [--top 30]\n');
    process.exit(2);
  }
  process.stdout.write(topOfProfile(positionals[0], Number(values.top)));
}
