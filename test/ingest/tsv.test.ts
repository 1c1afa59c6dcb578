import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { Ingestor } from '../../src/ingest/ingestor.js';
import { exportFile, replayFile } from '../../src/ingest/replay.js';
import { copyEscape, copyUnescape, parseTsvLine, readTsv } from '../../src/protocol/tsv.js';
import { openTestStore, silentLogger, stopOwnCluster } from '../support/database.js';
import { testEngines } from '../support/engines.js';
import { databaseDigest, INDEX_TABLES } from '../support/digest.js';
import { fixtureFile } from '../support/shared.js';

after(stopOwnCluster);

describe('TSV format', () => {
  test('COPY text escaping round-trips', () => {
    const text = 'a\\b\tc\nd\re {"x":"\\"q\\""}';
    const escaped = copyEscape(text);
    assert.equal(escaped, 'a\\\\b\\tc\\nd\\re {"x":"\\\\"q\\\\""}');
    assert.equal(copyUnescape(escaped), text);
    assert.equal(copyUnescape('\\101\\x42\\\\'), 'AB\\');
  });

  test('reads COPY lines and raw-JSON lines', () => {
    const copy = parseTsvLine('7\t2022-10-05 16:20:34.244945+00\t/new_block\t{"a":"x\\\\ny"}', 1);
    assert.equal(copy.id, '7');
    assert.equal(copy.path, '/new_block');
    assert.equal(copy.receivedAt.toISOString(), '2022-10-05T16:20:34.244Z');
    assert.deepEqual(JSON.parse(copy.payload), { a: 'x\ny' });
    const raw = parseTsvLine('1\t2025-10-16T16:10:40.482Z\t/new_mempool_tx\t["0x00\\n"]', 1);
    assert.equal(raw.payload, '["0x00\\n"]');
    assert.throws(() => parseTsvLine('1\t2\t/x', 3), /line 3: expected 4 tab-separated columns/);
  });

  test('every message of a fixture parses as JSON', async () => {
    let count = 0;
    for await (const m of readTsv(fixtureFile('mainnet-reorg-scenario1'))) {
      JSON.parse(m.payload);
      count++;
    }
    assert.equal(count, 149);
  });
});

for (const engine of testEngines(import.meta.url)) {
  describe(`export and replay (${engine})`, () => {
    test('an export replays into an identical index', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'stacks-export-'));
      const first = await openTestStore(engine);
      const second = await openTestStore(engine);
      try {
        await replayFile(
          new Ingestor(first, { isMainnet: true, logger: silentLogger }),
          fixtureFile('mainnet-reorg-scenario2'),
        );
        const file = join(dir, 'export.tsv');
        assert.equal(await exportFile(first, file), 6);
        const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
        assert.equal(lines.length, 6);
        assert.match(lines[0], /^1\t\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}\+00\t\/new_block\t\{/);

        await replayFile(new Ingestor(second, { isMainnet: true, logger: silentLogger }), file);
        const tables = INDEX_TABLES.filter((t) => t !== 'observer_messages');
        assert.deepEqual(await databaseDigest(second.sql, tables), await databaseDigest(first.sql, tables));

        // A file that does not parse stops the replay at that line, naming it.
        writeFileSync(join(dir, 'bad.tsv'), '1\t2022-10-05 16:20:34+00\t/new_block\t{not json}\n');
        await assert.rejects(
          replayFile(new Ingestor(second, { isMainnet: true, logger: silentLogger }), join(dir, 'bad.tsv')),
          /message 1 \(\/new_block\) failed: .*not valid JSON/,
        );
      } finally {
        await first.close();
        await second.close();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}
