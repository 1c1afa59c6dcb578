// PoX print events that change a stacker's STX lock. The boot pox-2/3/4 contracts print, for each stacking
// operation, `(ok (tuple (name ..) (stacker ..) (locked u..) (burnchain-unlock-height u..) (balance u..)
// (data (tuple ..))))`, where locked / burnchain-unlock-height are the stacker's state *before* the operation;
// the operation's own data tells what it becomes.
import { BOOT_ADDRESS_MAINNET, BOOT_ADDRESS_TESTNET } from './address.js';
import { parseClarityValue, type ClarityTree } from './clarity.js';

const POX_CONTRACTS = new Map<string, number>(
  [BOOT_ADDRESS_MAINNET, BOOT_ADDRESS_TESTNET].flatMap((a) => [
    [`${a}.pox-2`, 2],
    [`${a}.pox-3`, 3],
    [`${a}.pox-4`, 4],
  ]),
);

/** The lock a stacker holds after a lock-changing PoX operation. */
export interface PoxLockChange {
  /** the operation, e.g. `stack-increase` */
  name: string;
  /** the locked account */
  stacker: string;
  /** µSTX locked after the operation (0 after `handle-unlock`) */
  locked: string;
  /** burn height the lock ends at after the operation */
  unlockHeight: number;
}

function field(tuple: ClarityTree | undefined, name: string): ClarityTree | undefined {
  return tuple?.type === 'tuple' ? tuple.value.get(name) : undefined;
}

function uint(tuple: ClarityTree | undefined, name: string): bigint | null {
  const v = field(tuple, name);
  return v?.type === 'uint' ? v.value : null;
}

/**
 * Reads a print event of a boot pox contract; returns the lock it leaves when it is one of the operations
 * that lock, increase, extend or release a stacker's STX, else null (other operations, `(err ..)` prints,
 * other contracts or topics, undecodable values).
 */
export function poxLockChange(contractId: string, topic: string, rawValue: string): PoxLockChange | null {
  if (topic !== 'print' || !POX_CONTRACTS.has(contractId)) return null;
  let value: ClarityTree;
  try {
    value = parseClarityValue(rawValue);
  } catch {
    return null;
  }
  if (value.type !== 'ok' || value.value.type !== 'tuple') return null;
  const op = value.value;
  const name = field(op, 'name');
  const stacker = field(op, 'stacker');
  const data = field(op, 'data');
  const lockedBefore = uint(op, 'locked');
  const unlockBefore = uint(op, 'burnchain-unlock-height');
  if (name?.type !== 'string-ascii' || stacker?.type !== 'principal' || data?.type !== 'tuple') return null;
  if (lockedBefore === null || unlockBefore === null) return null;

  let locked = lockedBefore;
  let unlock = unlockBefore;
  switch (name.value) {
    case 'stack-stx':
    case 'delegate-stack-stx':
      locked = uint(data, 'lock-amount') ?? locked;
      unlock = uint(data, 'unlock-burn-height') ?? unlock;
      break;
    case 'stack-increase':
    case 'delegate-stack-increase': {
      const total = uint(data, 'total-locked');
      const increase = uint(data, 'increase-by');
      locked = total ?? (increase !== null ? lockedBefore + increase : locked);
      break;
    }
    case 'stack-extend':
    case 'delegate-stack-extend':
      unlock = uint(data, 'unlock-burn-height') ?? unlock;
      break;
    case 'handle-unlock':
      locked = 0n;
      break;
    default:
      return null;
  }
  return {
    name: name.value,
    stacker: stacker.value,
    locked: locked.toString(),
    unlockHeight: Number(unlock),
  };
}
