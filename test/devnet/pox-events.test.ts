import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { ClarityType, hexToCV, type ClarityValue, type TupleCV } from '@stacks/transactions';
import { generateChain } from '../../src/devnet/chain.js';
import type { NewBlockMessage } from '../support/node-messages.js';
import { fixtureMessages } from '../support/shared.js';

// The pox-4 `stack-stx` print event as a stacks-node synthesises it (stacks-core pox-locking/src/events.rs:
// evaluated after the fee and before the lock), checked against the one a recorded node emitted (the
// regtest S1 fixture) and, value by value, against the call's own arguments. Decoded with
// @stacks/transactions, not with the generator's encoder.

// mainnet PoX, as the generator's chain uses it
const FIRST_BURN_HEIGHT = 666050;
const CYCLE_LENGTH = 2100;
const PREPARE_LENGTH = 100;

/** The members of a node event that this test reads. */
interface NodeEvent {
  txid: string;
  event_index: number;
  type: string;
  contract_event?: { contract_identifier: string; raw_value: string };
  stx_lock_event?: { locked_amount: string; unlock_height: string; locked_address: string };
}

interface StackStxEvent {
  txid: string;
  print: TupleCV;
  printIndex: number;
  lock?: NodeEvent['stx_lock_event'] & { eventIndex: number };
}

function stackStxEvents(blocks: NewBlockMessage[]): StackStxEvent[] {
  const found: StackStxEvent[] = [];
  for (const block of blocks) {
    const events = block.events as NodeEvent[];
    for (const event of events) {
      const contractEvent = event.contract_event;
      if (event.type !== 'contract_event' || !contractEvent?.contract_identifier.endsWith('.pox-4')) continue;
      const value = hexToCV(contractEvent.raw_value);
      assert.equal(value.type, ClarityType.ResponseOk);
      const print = value.value as TupleCV;
      const name = print.value.name;
      if (name.type !== ClarityType.StringASCII || name.value !== 'stack-stx') continue;
      const lockEvent = events.find((e) => e.txid === event.txid && e.type === 'stx_lock_event');
      found.push({
        txid: event.txid,
        print,
        printIndex: event.event_index,
        lock: lockEvent && { ...lockEvent.stx_lock_event!, eventIndex: lockEvent.event_index },
      });
    }
  }
  return found;
}

/** `{key: type}` of a tuple, recursively (`data` is a tuple too). */
function shape(tuple: TupleCV): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(tuple.value)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([key, v]) => [key, v.type === ClarityType.Tuple ? shape(v) : typeOf(v)]),
  );
}

function typeOf(v: ClarityValue): string {
  // a node prints `(some ..)` or `none` for the optional fields: either is the optional type
  if (v.type === ClarityType.OptionalNone) return 'optional';
  if (v.type === ClarityType.OptionalSome) return 'optional';
  return v.type;
}

const uint = (tuple: TupleCV, key: string) => {
  const v = tuple.value[key];
  assert.equal(v?.type, ClarityType.UInt, `${key} is a uint`);
  return BigInt(v.value);
};
const data = (e: StackStxEvent) => e.print.value.data as TupleCV;

let generated: StackStxEvent[];
let recorded: StackStxEvent[];

before(async () => {
  const blocks: NewBlockMessage[] = [];
  await generateChain(
    { blocks: 24, accounts: 12, seed: 'pox-events', txsPerBlock: 12, workers: 0, nakamotoHeight: 12 },
    (m) => {
      if (m.path === '/new_block') blocks.push(JSON.parse(m.payload) as NewBlockMessage);
    },
  );
  generated = stackStxEvents(blocks);
  recorded = stackStxEvents(
    fixtureMessages('regtest-env-pox-4-stack-stx-in-reward-phase-S1')
      .filter((m) => m.path === '/new_block')
      .map((m) => JSON.parse(m.payload) as NewBlockMessage),
  );
});

describe('generated pox-4 stack-stx events', () => {
  test('the chain has some, and the recorded node emitted one', () => {
    assert.ok(generated.length >= 1, `stack-stx events generated: ${generated.length}`);
    assert.equal(recorded.length, 1);
  });

  test('the same keys and value types as the recorded node event, stacker a bare principal', () => {
    const expected = shape(recorded[0].print);
    assert.equal((expected as { stacker: string }).stacker, ClarityType.PrincipalStandard);
    for (const e of generated) assert.deepEqual(shape(e.print), expected, e.txid);
  });

  test('values as the node computes them before the lock', () => {
    for (const e of generated) {
      const d = data(e);
      const lockAmount = uint(d, 'lock-amount');
      const period = uint(d, 'lock-period');
      const startBurnHeight = Number(uint(d, 'start-burn-height'));
      const offset = startBurnHeight - FIRST_BURN_HEIGHT;
      const cycle = BigInt(Math.floor(offset / CYCLE_LENGTH));
      const inPrepare = offset % CYCLE_LENGTH >= CYCLE_LENGTH - PREPARE_LENGTH;
      const unlock = BigInt(FIRST_BURN_HEIGHT) + (cycle + 1n + period) * BigInt(CYCLE_LENGTH);
      // no earlier lock is held when the stacker calls stack-stx, and this one is not applied yet
      assert.equal(uint(e.print, 'locked'), 0n);
      assert.equal(uint(e.print, 'burnchain-unlock-height'), 0n);
      assert.ok(uint(e.print, 'balance') >= lockAmount, 'the unlocked balance covers the lock');
      assert.equal(uint(d, 'unlock-burn-height'), unlock);
      assert.equal(uint(d, 'start-cycle-id'), cycle + 1n + (inPrepare ? 1n : 0n));
      const end = d.value['end-cycle-id'];
      assert.equal(end.type, ClarityType.OptionalSome);
      assert.equal(BigInt((end.value as { value: bigint }).value), cycle + 1n + period);
      assert.ok(uint(d, 'max-amount') >= lockAmount);
      // the lock event follows the print, for the same account, amount and height
      const stacker = e.print.value.stacker as { value: string };
      assert.deepEqual(e.lock, {
        locked_amount: lockAmount.toString(),
        unlock_height: unlock.toString(),
        locked_address: stacker.value,
        contract_identifier: 'SP000000000000000000002Q6VF78.pox-4',
        eventIndex: e.printIndex + 1,
      });
    }
  });
});
