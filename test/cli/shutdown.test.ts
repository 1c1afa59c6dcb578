import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pino from 'pino';
import { Shutdown } from '../../src/cli/shutdown.js';

// The stop of a server command, driven by hand: signals received, a clock, and the exit recorded.

function harness() {
  const messages: string[] = [];
  const logger = pino(
    { level: 'debug', base: null },
    { write: (line: string) => messages.push((JSON.parse(line) as { msg: string }).msg) },
  );
  let clock = 0;
  let exited: (code: number) => void = () => {};
  const exit = new Promise<number>((resolve) => (exited = resolve));
  const codes: number[] = [];
  const shutdown = new Shutdown(logger, {
    now: () => clock,
    exit: (code) => {
      codes.push(code);
      exited(code);
    },
  });
  return {
    shutdown,
    messages,
    codes,
    exit,
    at: (ms: number) => (clock = ms),
  };
}

const never = () => new Promise<void>(() => {});
const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('shutdown', () => {
  test('a signal runs the stop steps, the last registered first, then exits 0', async () => {
    const { shutdown, messages, exit } = harness();
    const ran: string[] = [];
    await shutdown.starting(async () => {
      shutdown.onStop('database', async () => void ran.push('database'));
      shutdown.onStop('servers', async () => void ran.push('servers'));
    });
    assert.equal(shutdown.signal.aborted, false);
    shutdown.receive('SIGTERM');
    assert.equal(shutdown.signal.aborted, true);
    assert.equal(await exit, 0);
    assert.deepEqual(ran, ['servers', 'database']);
    assert.deepEqual(messages, ['shutting down: finishing in-flight requests and messages', 'stopped']);
  });

  test('a copy of the signal (the process group, npm) is ignored; a later signal forces exit 1', async () => {
    const { shutdown, messages, codes, at } = harness();
    await shutdown.starting(async () => shutdown.onStop('a stop that hangs', never));
    at(0);
    shutdown.receive('SIGINT');
    at(40);
    shutdown.receive('SIGINT');
    at(900);
    shutdown.receive('SIGTERM');
    await tick();
    assert.deepEqual(codes, []);
    at(1_000);
    shutdown.receive('SIGINT');
    assert.deepEqual(codes, [1]);
    assert.deepEqual(messages, [
      'shutting down: finishing in-flight requests and messages',
      'signal repeated by the process group or npm: already stopping',
      'signal repeated by the process group or npm: already stopping',
      'second signal: exiting now',
    ]);
  });

  test('a signal during start-up: the start-up stops at its next check, closes what it opened, exit 0', async () => {
    const { shutdown, exit, codes } = harness();
    const closed: string[] = [];
    let opened!: () => void;
    const openedOne = new Promise<void>((resolve) => (opened = resolve));
    const starting = shutdown.starting(async () => {
      opened();
      await new Promise((resolve) => shutdown.signal.addEventListener('abort', resolve));
      try {
        shutdown.signal.throwIfAborted();
      } finally {
        closed.push('the database');
      }
      shutdown.onStop('never registered', async () => void closed.push('wrong'));
    });
    await openedOne;
    shutdown.receive('SIGTERM');
    await starting; // resolves: the start-up stopped as asked
    assert.equal(await exit, 0);
    assert.deepEqual(closed, ['the database']);
    assert.deepEqual(codes, [0]);
  });

  test('a start-up that fails on its own is rethrown, and a stop does not turn it into exit 0', async () => {
    const { shutdown, codes } = harness();
    const failure = new Error('port taken');
    let fail!: () => void;
    const starting = shutdown.starting(
      () => new Promise<void>((_resolve, reject) => (fail = () => reject(failure))),
    );
    shutdown.receive('SIGTERM');
    fail();
    await assert.rejects(starting, (err: unknown) => err === failure);
    await tick();
    assert.deepEqual(codes, []);
  });
});
