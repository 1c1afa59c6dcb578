// Who pays a transaction's fee: the sponsor of a sponsored tx (its second spending condition pays), else its
// sender. The one place that says so: the running balances ingest keeps (write/contributions.ts) decide it in
// JS from the rows of a block, the balance reads (read/balances.ts) in SQL over stored rows; both take it
// from here. (Not this rule: upstream's pending mempool outbound, which charges the sender a sponsored tx's
// fee as well: see read/balances.ts.)

/** The columns of a `txs` or `mempool_txs` row that decide who pays its fee. */
export interface FeePayerColumns {
  sender_address: string;
  sponsored: boolean;
  sponsor_address: string | null;
}

/** The principal paying the row's fee (null only for a sponsored row without a sponsor, which no node sends). */
export function feePayer(tx: FeePayerColumns): string | null {
  return tx.sponsored ? tx.sponsor_address : tx.sender_address;
}

const column = (alias: string, name: string) => (alias === '' ? name : `${alias}.${name}`);

/**
 * SQL condition: the principal (SQL text of a parameter, e.g. `$1`) sent the row `alias` and pays its fee.
 * With `sponsorPaysRow`, the two halves of "who pays": kept apart so each is served by its own index
 * (txs_sender_height_idx, txs_sponsor_height_idx), which a CASE over the columns would not be.
 */
export function senderPaysRow(alias: string, principal: string): string {
  return `NOT ${column(alias, 'sponsored')} AND ${column(alias, 'sender_address')} = ${principal}`;
}

/** SQL condition: the principal (SQL text of a parameter) sponsors the row `alias`, so pays its fee. */
export function sponsorPaysRow(alias: string, principal: string): string {
  return `${column(alias, 'sponsored')} AND ${column(alias, 'sponsor_address')} = ${principal}`;
}
