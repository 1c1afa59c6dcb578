import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isoTime, isoTimeOrEmpty } from '../../src/api/render/time.js';

const byDate = (unixSeconds: number) => new Date(unixSeconds * 1000).toISOString();

describe('isoTime', () => {
  test('writes what Date#toISOString writes, for every day from 1970 to 2400 and its last second', () => {
    const lastDay = Date.UTC(2400, 11, 31) / 1000;
    let days = 0;
    for (let start = 0; start <= lastDay; start += 86_400) {
      assert.equal(isoTime(start), byDate(start));
      assert.equal(isoTime(start + 86_399), byDate(start + 86_399));
      days++;
    }
    assert.equal(days, 157_420);
  });

  test('writes what Date#toISOString writes for seconds at random, and known dates', () => {
    let state = 12_345;
    for (let n = 0; n < 100_000; n++) {
      state = (state * 1103515245 + 12345) % 2 ** 31;
      const seconds = Math.floor((state / 2 ** 31) * 253_402_300_800);
      assert.equal(isoTime(seconds), byDate(seconds), String(seconds));
    }
    assert.equal(isoTime(0), '1970-01-01T00:00:00.000Z');
    assert.equal(isoTime(951_782_400), '2000-02-29T00:00:00.000Z');
    assert.equal(isoTime(4_107_542_399), '2100-02-28T23:59:59.000Z');
    assert.equal(isoTime(4_107_542_400), '2100-03-01T00:00:00.000Z');
    assert.equal(isoTime(1_700_000_000), '2023-11-14T22:13:20.000Z');
    assert.equal(isoTime(253_402_300_799), '9999-12-31T23:59:59.000Z');
  });

  test('times outside whole seconds of years 1970 to 9999 are written by Date#toISOString', () => {
    assert.equal(isoTime(-1), '1969-12-31T23:59:59.000Z');
    assert.equal(isoTime(1.5), '1970-01-01T00:00:01.500Z');
    assert.equal(isoTime(253_402_300_800), '+010000-01-01T00:00:00.000Z');
    assert.throws(() => isoTime(Number.NaN), RangeError);
    assert.equal(isoTimeOrEmpty(0), '');
    assert.equal(isoTimeOrEmpty(86_400), '1970-01-02T00:00:00.000Z');
  });
});
