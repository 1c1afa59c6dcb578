import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import pino from 'pino';
import { seedDemoChain } from '../../src/cli/demo.js';
import { loadConfig } from '../../src/config.js';
import { defaultNakamotoHeight } from '../../src/devnet/chain.js';
import type { Store } from '../../src/store/store.js';
import { openTestStore, silentLogger, stopOwnCluster } from '../support/database.js';
import { appliedMessageLog, databaseDigest, READ_TABLES, RECEIPT_TIME_COLUMNS } from '../support/digest.js';

// The demo chain `start` indexes into an empty database, when that indexing is stopped part-way.

after(stopOwnCluster);

const chain = {
  blocks: 14,
  accounts: 12,
  seed: 'demo-stopped',
  txsPerBlock: 5,
  workers: 0,
  nakamotoHeight: defaultNakamotoHeight(14),
};
const config = loadConfig({});

interface LogLine {
  msg: string;
  height?: number;
  [key: string]: unknown;
}

/** A logger whose lines are kept, and which calls `onLine` with each. */
function capturingLogger(onLine: (line: LogLine) => void = () => {}) {
  const lines: LogLine[] = [];
  const logger = pino(
    { level: 'info', base: null },
    {
      write(text: string) {
        const line = JSON.parse(text) as LogLine;
        lines.push(line);
        onLine(line);
      },
    },
  );
  return { logger, lines };
}

async function snapshot(store: Store) {
  return {
    digest: await databaseDigest(store.sql, READ_TABLES, RECEIPT_TIME_COLUMNS),
    log: await appliedMessageLog(store.sql),
  };
}

const tipHeight = async (store: Store) =>
  (await store.sql<{ block_height: number }[]>`SELECT block_height FROM chain_tip`)[0].block_height;

describe('demo chain stopped part-way', () => {
  test('stops between two messages; the next start indexes the rest, to the index of an uninterrupted run', async () => {
    const stopped = await openTestStore('postgres');
    const whole = await openTestStore('postgres');
    try {
      // stop as soon as block 6 is indexed
      const controller = new AbortController();
      const first = capturingLogger((line) => {
        if (line.msg === 'block indexed' && line.height === 6) controller.abort(new Error('stop asked for'));
      });
      await assert.rejects(
        seedDemoChain(stopped, config, first.logger, { chain, signal: controller.signal }),
        (err: unknown) => err === controller.signal.reason,
      );
      assert.equal(await tipHeight(stopped), 6);
      assert.deepEqual(
        first.lines.filter((l) => l.msg.startsWith('demo chain stopped')).map((l) => l.msg),
        ['demo chain stopped at height 6 of 14: the next start indexes the rest'],
      );

      const second = capturingLogger();
      const report = await seedDemoChain(stopped, config, second.logger, { chain });
      assert.equal(report?.tipHeight, 14);
      assert.deepEqual(second.lines[0], {
        level: 30,
        time: second.lines[0].time,
        height: 6,
        blocks: 14,
        msg: 'the demo chain was stopped at height 6 of 14 by an earlier start: indexing the rest (what was indexed is skipped)',
      });
      assert.equal(await tipHeight(stopped), 14);
      // complete now: later starts serve it as it is
      assert.equal(await seedDemoChain(stopped, config, silentLogger, { chain }), null);

      const uninterrupted = await seedDemoChain(whole, config, silentLogger, { chain });
      assert.equal(uninterrupted?.canonicalTxs, report.canonicalTxs);
      assert.deepEqual(await snapshot(stopped), await snapshot(whole));
    } finally {
      await stopped.close();
      await whole.close();
    }
  });
});
