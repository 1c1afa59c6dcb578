import type { AddressTxEvent, AddressTxPage, ListPosition } from '../../store/read/address-history.js';
import type { AccountTxParts } from '../../store/read/account-txs.js';
import { EventKind } from '../../store/schema/codes.js';
import type { RenderOptions } from './txs.js';
import { minedTransaction } from './txs.js';

// The v2 address list and an address transaction's events (docs/upstream.md C.9, C.10).

type AssetEventName = 'transfer' | 'mint' | 'burn';
const KIND_NAMES: Record<number, 'stx' | 'ft' | 'nft'> = {
  [EventKind.stxAsset]: 'stx',
  [EventKind.ftAsset]: 'ft',
  [EventKind.nftAsset]: 'nft',
};

/** An asset event without a sender is a mint, one without a recipient a burn (the node writes them so). */
function assetEventName(event: { sender: string | null; recipient: string | null }): AssetEventName {
  if (event.sender === null) return 'mint';
  if (event.recipient === null) return 'burn';
  return 'transfer';
}

/** A v2 cursor: `<index_block_hash>:<microblock_sequence>:<tx_index>`; an unconfirmed microblock tx's is `0x`. */
const cursorOf = (at: ListPosition | null) =>
  at && `${at.index_block_hash || '0x'}:${at.microblock_sequence}:${at.tx_index}`;

/**
 * A principal's part in a tx: the STX it sent (its events', plus the fee when it paid it: as the sender of a
 * tx not sponsored, or as the sponsor) and received, and its STX, FT and NFT events counted per type.
 */
function addressTransaction(part: AccountTxParts, principal: string, options: RenderOptions) {
  const tx = part.tx!;
  const payer = tx.sponsored ? tx.sponsor_address : tx.sender_address;
  let sent = payer === principal ? BigInt(tx.fee_rate) : 0n;
  let received = 0n;
  const counts = () => ({ transfer: 0, mint: 0, burn: 0 });
  const events = { stx: counts(), ft: counts(), nft: counts() };
  for (const t of part.transfers) {
    const kind = KIND_NAMES[t.kind];
    if (kind === undefined) continue;
    events[kind][assetEventName(t)]++;
    if (t.kind !== EventKind.stxAsset) continue;
    if (t.sender === principal) sent += BigInt(t.amount!);
    if (t.recipient === principal) received += BigInt(t.amount!);
  }
  return {
    tx: minedTransaction(tx, { ...options, withoutAbi: true }),
    stx_sent: sent.toString(),
    stx_received: received.toString(),
    events,
  };
}

/** A page of the v2 address list; its txs in the list's order (newest first). */
export function addressTransactionsPage(
  page: AddressTxPage,
  query: { limit: number; offset: number },
  principal: string,
  options: RenderOptions,
) {
  return {
    limit: query.limit,
    offset: query.offset,
    total: page.total,
    next_cursor: cursorOf(page.nextCursor),
    prev_cursor: cursorOf(page.prevCursor),
    cursor: cursorOf(page.cursor),
    results: page.txs.map((part) => addressTransaction(part, principal, options)),
  };
}

/** An STX, FT or NFT event as the address transaction events list shows it; absent parties left out. */
export function addressTransactionEvent(event: AddressTxEvent) {
  const data: {
    type: AssetEventName;
    amount?: string;
    asset_identifier?: string;
    value?: { hex: string; repr: string };
    sender?: string;
    recipient?: string;
  } = { type: assetEventName(event) };
  if (event.kind !== EventKind.nftAsset) data.amount = event.amount!;
  if (event.kind !== EventKind.stxAsset) data.asset_identifier = event.asset_identifier!;
  if (event.kind === EventKind.nftAsset) data.value = { hex: event.value!, repr: event.value_repr! };
  if (event.sender !== null) data.sender = event.sender;
  if (event.recipient !== null) data.recipient = event.recipient;
  return { type: KIND_NAMES[event.kind], event_index: event.event_index, data };
}
