import type { AccountTxParts, TransferRecord } from '../../store/read/account-txs.js';
import type { AccountBalances } from '../../store/read/balances.js';
import { EventKind } from '../../store/schema/codes.js';
import { TransfersOfTx, type AddressBalances } from '../schemas/addresses.js';
import { Transaction } from '../schemas/transactions.js';
import { serializerOf } from './serializer.js';
import { minedTransaction } from './txs.js';
import type { MinedTxRecord } from '../../store/read/txs.js';

// Store records → the balances and transactions-with-transfers objects (docs/upstream.md A.1, A.8, A.9).

/** What a principal holds of a token: what it received less what it sent (an FT amount, an NFT count). */
const held = (a: AccountBalances['fungible'][number]) =>
  (BigInt(a.total_received) - BigInt(a.total_sent)).toString();

/**
 * Balances at effective height `height`. `pending` fields (estimated and pending balances) appear only on
 * reads without until_block; `token_offering_locked` only for principals with a vesting schedule, split at
 * `height` (amounts unlocking above it are still locked).
 */
export function balancesJson(balances: AccountBalances, height: number): AddressBalances {
  const { stx, lock, pending, vesting } = balances;
  const balance =
    BigInt(stx.total_received) -
    BigInt(stx.total_sent) -
    BigInt(stx.total_fees_sent) +
    BigInt(stx.total_miner_rewards_received);
  const out: AddressBalances = {
    stx: {
      balance: balance.toString(),
      ...(pending
        ? {
            estimated_balance: (balance + BigInt(pending.inbound) - BigInt(pending.outbound)).toString(),
            pending_balance_inbound: pending.inbound,
            pending_balance_outbound: pending.outbound,
          }
        : {}),
      total_sent: stx.total_sent,
      total_received: stx.total_received,
      total_fees_sent: stx.total_fees_sent,
      total_miner_rewards_received: stx.total_miner_rewards_received,
      lock_tx_id: lock?.lock_tx_id ?? '',
      locked: lock?.locked ?? '0',
      lock_height: lock?.lock_height ?? 0,
      burnchain_lock_height: lock?.burnchain_lock_height ?? 0,
      burnchain_unlock_height: lock?.burnchain_unlock_height ?? 0,
    },
    fungible_tokens: Object.fromEntries(
      balances.fungible.map((a) => [
        a.asset_identifier,
        {
          balance: held(a),
          total_sent: a.total_sent,
          total_received: a.total_received,
        },
      ]),
    ),
    non_fungible_tokens: Object.fromEntries(
      balances.nonFungible.map((a) => [
        a.asset_identifier,
        {
          count: held(a),
          total_sent: a.total_sent,
          total_received: a.total_received,
        },
      ]),
    ),
  };
  if (vesting.length > 0) {
    let locked = 0n;
    let unlocked = 0n;
    for (const row of vesting) {
      if (row.block_height > height) locked += BigInt(row.amount);
      else unlocked += BigInt(row.amount);
    }
    out.token_offering_locked = {
      total_locked: locked.toString(),
      total_unlocked: unlocked.toString(),
      unlock_schedule: vesting.map((r) => ({ amount: r.amount, block_height: r.block_height })),
    };
  }
  return out;
}

/**
 * The principal's transfers in a tx, and its STX totals. `stx_sent` counts the fee whenever the principal is
 * the sender, even of a sponsored tx (the sponsor paid it), as the original API does.
 */
function transfersOfTx(
  tx: { sender_address: string; fee_rate: string },
  transfers: TransferRecord[],
  principal: string,
): TransfersOfTx {
  let sent = tx.sender_address === principal ? BigInt(tx.fee_rate) : 0n;
  let received = 0n;
  const out: TransfersOfTx = {
    stx_sent: '',
    stx_received: '',
    stx_transfers: [],
    ft_transfers: [],
    nft_transfers: [],
  };
  for (const t of transfers) {
    const sender = t.sender ?? '';
    const recipient = t.recipient ?? '';
    if (t.kind === EventKind.stxAsset) {
      if (sender === principal) sent += BigInt(t.amount!);
      if (recipient === principal) received += BigInt(t.amount!);
      out.stx_transfers.push({ amount: t.amount!, sender, recipient });
    } else if (t.kind === EventKind.ftAsset) {
      out.ft_transfers.push({ amount: t.amount!, asset_identifier: t.asset_identifier!, sender, recipient });
    } else {
      out.nft_transfers.push({
        value: { hex: t.value!, repr: t.value_repr! },
        asset_identifier: t.asset_identifier!,
        sender,
        recipient,
      });
    }
  }
  out.stx_sent = sent.toString();
  out.stx_received = received.toString();
  return out;
}

const writeTx = serializerOf(Transaction);
const writeTransfers = serializerOf(TransfersOfTx);

/** A tx's rendering as a listing needs it: its JSON text and the fields its transfer totals use. */
export interface RenderedTx {
  json: string;
  sender_address: string;
  fee_rate: string;
}

/** A mined tx row → its rendering (the tx object without events, serialized by its schema). */
export function renderedTx(row: MinedTxRecord): RenderedTx {
  return {
    json: writeTx(minedTransaction(row)),
    sender_address: row.sender_address,
    fee_rate: row.fee_rate,
  };
}

/**
 * The JSON text of a transaction with the principal's transfers, as the TransactionWithTransfers schema's
 * serializer writes it, from the tx's rendering (cached or fresh).
 */
export function txWithTransfersText(tx: RenderedTx, transfers: TransferRecord[], principal: string): string {
  // `tx` is the first member: `{"tx":…,` then the others as their own object writes them
  const rest = writeTransfers(transfersOfTx(tx, transfers, principal));
  return `{"tx":${tx.json},${rest.slice(1)}`;
}

/**
 * The JSON text of a transactions_with_transfers page, as the page schema's serializer writes it, each tx
 * rendered by `txOf` (the caller's: from its row, or a rendering cached by earlier requests). Sorted as
 * upstream re-sorts a page after selecting it in chain order: by height and tx index, newest first (the
 * principal index row's, those of the tx row).
 */
export function txsWithTransfersPageJson(
  page: { limit: number; offset: number; total: number },
  parts: AccountTxParts[],
  principal: string,
  txOf: (part: AccountTxParts) => RenderedTx,
): string {
  const sorted = [...parts].sort(
    (a, b) => b.key.block_height - a.key.block_height || b.key.tx_index - a.key.tx_index,
  );
  const results = sorted.map((part) => txWithTransfersText(txOf(part), part.transfers, principal));
  return `{"limit":${page.limit},"offset":${page.offset},"total":${page.total},"results":[${results.join(',')}]}`;
}
