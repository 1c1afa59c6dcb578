import { createHash } from 'node:crypto';
import type { NewBlock } from './payloads.js';

/**
 * A digest of what a `/new_block` message says, whatever its serialization: object keys in any order,
 * any whitespace or escapes, transactions and events listed in any order (they are numbered: `tx_index`,
 * `event_index`). Two messages about one block (one index_block_hash) are the same block exactly when their
 * digests are equal: a node re-sending a block it re-serialized sends the same digest, a message claiming a
 * known block with other content does not.
 *
 * SHA-256 over canonical JSON: keys sorted, numbers and strings as JSON.stringify writes them (so `1.0` and
 * `1`, `"\u0041"` and `"A"` are one), `undefined` members left out.
 */
export function blockContentDigest(block: NewBlock): string {
  const ordered = {
    ...block,
    transactions: [...block.transactions].sort((a, b) => a.tx_index - b.tx_index),
    events: [...block.events].sort((a, b) => a.event_index - b.event_index),
  };
  return createHash('sha256').update(canonicalJson(ordered)).digest('hex');
}

function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i > 0 ? ',' : '') + canonicalJson(value[i]);
    return out + ']';
  }
  const record = value as Record<string, unknown>;
  let out = '{';
  for (const key of Object.keys(record).sort()) {
    const member = record[key];
    if (member === undefined) continue;
    out += (out.length > 1 ? ',' : '') + JSON.stringify(key) + ':' + canonicalJson(member);
  }
  return out + '}';
}
