import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { after, describe, test } from 'node:test';
import { readTsv } from '../../src/protocol/tsv.js';
import { runCli } from '../support/cli.js';
import { createTestDatabaseUrl, stopOwnCluster } from '../support/database.js';
import { fixtureFile } from '../support/shared.js';

// The progress bar of `replay` (the same bar as `generate` and the demo), in a terminal and in a log file.

after(stopOwnCluster);

/** A short mainnet recording with reorgs: the replay logs a reorg line and a line per block while the bar runs. */
const FIXTURE = 'mainnet-reorg-scenario2';

// ANSI control sequences (cursor moves, line clears) and carriage returns
// eslint-disable-next-line no-control-regex
const CONTROL = /\x1b\[[0-9;?]*[A-Za-z]|\x1b[78]|\r/;

/**
 * What a terminal shows on each row of `raw`: text overwrites from the cursor; `\r` and `ESC[1G` move it to
 * the first column, `ESC[2K` clears the row, `ESC[0K` (`ESC[K`) clears right of the cursor. (Enough of a
 * terminal for what the bar writes; other sequences are ignored.)
 */
function visibleRows(raw: string): string[] {
  return raw.split('\n').map((row) => {
    let shown: string[] = [];
    let cursor = 0;
    // eslint-disable-next-line no-control-regex
    for (const token of row.match(/\x1b\[[0-9;?]*[A-Za-z]|\x1b[78]|\r|[^\x1b\r]+/g) ?? []) {
      if (token === '\r' || token === '\x1b[1G' || token === '\x1b[G') cursor = 0;
      else if (token === '\x1b[2K') shown = [];
      else if (token === '\x1b[0K' || token === '\x1b[K') shown = shown.slice(0, cursor);
      else if (token.startsWith('\x1b')) continue;
      else {
        for (const ch of token) shown[cursor++] = ch;
      }
    }
    return Array.from(shown, (ch) => ch ?? ' ').join('');
  });
}

describe('replay progress', () => {
  test('in a terminal: log lines (a reorg, one per block) are printed above the bar, never on its row', async () => {
    const run = await runCli(['replay', '--file', fixtureFile(FIXTURE)], {
      terminal: true,
      // JSON lines, told apart from the bar's row by their text (the default in a terminal is tested below)
      env: { DATABASE_URL: await createTestDatabaseUrl(), LOG_FORMAT: 'json' },
    });
    assert.equal(run.code, 0, run.stdout.slice(-2000));
    const rows = visibleRows(run.stdout);
    const logRows = rows.filter((row) => row.includes('{"level"'));
    assert.ok(
      logRows.some((row) => row.includes('"msg":"reorg: restoring a fork"')),
      'a reorg was logged',
    );
    assert.ok(
      logRows.some((row) => /"height":\d+,"txs":\d+,"ms":\d+,"msg":"block indexed"/.test(row)),
      'a line per block',
    );
    for (const row of logRows) {
      // the row shows the log line alone: the bar was cleared from it, and drawn again below
      assert.ok(row.startsWith('{"level"'), `a log line shares its row with the bar: ${row.slice(0, 160)}`);
      assert.doesNotThrow(() => JSON.parse(row), row);
    }
    const barRows = rows.filter((row) => /^replay \[/.test(row));
    assert.ok(barRows.length >= 1, 'the bar is shown');
    assert.match(barRows.at(-1)!, /^replay \[=+\] 100% \d+ msgs, \d+ blocks, [\d.]+ blocks\/s$/);
    // the bar ends at 100%, on the row before the last log line ("replay finished")
    assert.match(rows.at(-3)!, /^replay \[=+\] 100% /);
    assert.match(rows.at(-2)!, /"msg":"replay finished"/);
  });

  test('in a terminal by default: readable log lines, kept whole (line wrapping never turned off)', async () => {
    const run = await runCli(['replay', '--file', fixtureFile(FIXTURE)], {
      terminal: true,
      env: { DATABASE_URL: await createTestDatabaseUrl() },
    });
    assert.equal(run.code, 0, run.stdout.slice(-2000));
    // ESC[?7l turns the terminal's wrapping off: longer lines are then cut at its width
    assert.ok(!run.stdout.includes('\x1b[?7l'), 'line wrapping turned off');
    const rows = visibleRows(run.stdout);
    assert.ok(!rows.some((row) => row.includes('{"level"')), 'a JSON log line on a terminal');
    const time = '\\[\\d\\d:\\d\\d:\\d\\d\\.\\d{3}\\]';
    assert.ok(
      rows.some((row) =>
        new RegExp(`^${time} INFO: block indexed \\{"height":\\d+,"txs":\\d+,"ms":\\d+\\}$`).test(row),
      ),
      'a line per block',
    );
    const finished = rows.filter((row) => / INFO: replay finished /.test(row));
    assert.equal(finished.length, 1);
    // longer than the 80 columns of the test's terminal, and shown whole
    assert.ok(finished[0].length > 80, finished[0]);
    assert.match(
      finished[0],
      new RegExp(`^${time} INFO: replay finished \\{"messages":\\d+,.*"blocks_per_second":\\d+\\}$`),
    );
  });

  test('off a terminal: plain lines, no redraws, and the log lines untouched on stdout', async () => {
    const run = await runCli(['replay', '--file', fixtureFile(FIXTURE)], {
      env: { DATABASE_URL: await createTestDatabaseUrl() },
    });
    assert.equal(run.code, 0, run.stderr);
    assert.doesNotMatch(run.stderr, CONTROL, 'no cursor movement or carriage return');
    const lines = run.stderr.split('\n').filter(Boolean);
    assert.ok(lines.length >= 2, run.stderr);
    for (const line of lines) assert.match(line, /^replay: \d+% /);
    const percents = lines.map((line) => Number(/(\d+)%/.exec(line)![1]));
    assert.deepEqual(
      percents,
      [...percents].sort((a, b) => a - b),
      'never goes back',
    );
    assert.equal(percents[0], 0);
    assert.match(lines.at(-1)!, /^replay: 100% \d+ msgs, \d+ blocks, [\d.]+ blocks\/s$/);
    for (const line of run.stdout.split('\n').filter(Boolean))
      assert.doesNotThrow(() => JSON.parse(line), line);
  });

  test('progress is counted line by line: a small file is not at 100% after its first message', async () => {
    const file = fixtureFile('mocknet');
    const total = statSync(file).size;
    assert.ok(total < 1 << 20, 'smaller than the read chunk: the stream reads it all at once');
    const positions: number[] = [];
    for await (const message of readTsv(file)) positions.push(message.bytesRead);
    // the end of each message's line, counted independently
    const expected: number[] = [];
    let end = 0;
    for (const line of readFileSync(file).toString('utf8').split('\n')) {
      end += Buffer.byteLength(line) + 1;
      if (line.length > 0) expected.push(Math.min(end, total));
    }
    assert.deepEqual(positions, expected);
    assert.ok(positions.length > 10 && positions[0] < total);
    assert.equal(positions.at(-1), total);
  });
});
