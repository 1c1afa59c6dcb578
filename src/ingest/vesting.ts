import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { b58ToC32 } from 'c32check';
import type { Logger } from 'pino';
import { isValidStacksAddress } from '../chain/address.js';
import { OperatorError } from '../errors.js';
import type { Store } from '../store/store.js';
import { replaceVestingSchedule, vestingSourceHash, type VestingRow } from '../store/write/vesting.js';

// The Stacks 1.0 token-offering vesting schedule (the `token_offering_locked` part of the balances answer).
// The file holds rows `address,value,blocks`: `value` µSTX of `address` unlock at Stacks height `blocks`.
// Addresses are Stacks (c32) or Bitcoin (base58, converted to the Stacks address of the same key hash).
// Blank lines, `#` comments and an `address,value,blocks` header are skipped; when the file is a genesis
// chainstate dump, only its `-----BEGIN STX VESTING-----` ... `-----END STX VESTING-----` section is read.

/** @internal exported for its tests */
export class VestingFileError extends OperatorError {}

const BEGIN = '-----BEGIN STX VESTING-----';
const END = '-----END STX VESTING-----';

function stacksAddress(address: string): string | null {
  if (isValidStacksAddress(address) && /^S[0-9A-Z]+$/.test(address)) return address;
  try {
    return b58ToC32(address);
  } catch {
    return null;
  }
}

/**
 * Parses a vesting file; a malformed row throws a VestingFileError naming its line.
 * @internal exported for its tests
 */
export function parseVestingFile(text: string, file = 'vesting file'): VestingRow[] {
  let lines = text.split(/\r?\n/);
  const begin = lines.findIndex((l) => l.trim() === BEGIN);
  if (begin >= 0) {
    const end = lines.findIndex((l, i) => i > begin && l.trim() === END);
    lines = lines.slice(begin + 1, end < 0 ? undefined : end);
  }
  const rows: VestingRow[] = [];
  lines.forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || /^address\s*,/i.test(line)) return;
    const where = `${file} line ${begin >= 0 ? begin + 2 + i : i + 1}`;
    const parts = line.split(',').map((p) => p.trim());
    if (parts.length !== 3) {
      throw new VestingFileError(`${where}: expected "address,value,blocks", got "${line}"`);
    }
    const [given, value, blocks] = parts;
    const address = stacksAddress(given);
    if (!address) throw new VestingFileError(`${where}: "${given}" is not a Stacks or Bitcoin address`);
    if (!/^\d+$/.test(value)) throw new VestingFileError(`${where}: value "${value}" is not a whole amount`);
    if (!/^\d+$/.test(blocks) || Number(blocks) > 2_147_483_647) {
      throw new VestingFileError(`${where}: blocks "${blocks}" is not a block height`);
    }
    rows.push({ address, value, block: Number(blocks) });
  });
  return rows;
}

/**
 * Loads the vesting file into the database when its content differs from what was loaded last (start-up
 * and `migrate` call this when VESTING_FILE is set). Returns the number of rows loaded, or null if unchanged.
 */
export async function loadVestingFile(store: Store, file: string, logger: Logger): Promise<number | null> {
  let content: Buffer;
  try {
    content = await readFile(file);
  } catch (err) {
    throw new VestingFileError(`VESTING_FILE ${file} cannot be read: ${(err as Error).message}`);
  }
  const sha256 = createHash('sha256').update(content).digest('hex');
  if ((await vestingSourceHash(store.sql)) === sha256) return null;
  const rows = parseVestingFile(content.toString('utf8'), file);
  await store.transaction((sql) => replaceVestingSchedule(sql, rows, { file, sha256 }));
  logger.info({ file, rows: rows.length }, 'token-offering vesting schedule loaded');
  return rows.length;
}
