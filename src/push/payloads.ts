import type { FastifyInstance } from 'fastify';
import { IN_PROCESS_CLIENT } from '../api/plugins/access-control.js';

// Every payload is the JSON the matching read endpoint answers at the moment it is asked, asked of this
// process's own API (Fastify's inject: the route, its caches and its serializer, without a socket), so a
// pushed event can never differ from what the endpoint says. One function per topic names its endpoint.
// A payload is asked once per event and round (`PayloadAsker` keeps the answers of a round), whatever the
// number of subscribers. An endpoint that does not answer 200 (not found, a route not served) gives no
// payload, and nothing is pushed.

export class PayloadAsker {
  private readonly answers = new Map<string, Promise<string | undefined>>();

  constructor(private readonly app: FastifyInstance) {}

  /** The body of `GET url` when it answers 200. */
  get(url: string): Promise<string | undefined> {
    let answer = this.answers.get(url);
    if (!answer) {
      answer = this.app
        .inject({ method: 'GET', url, remoteAddress: IN_PROCESS_CLIENT })
        .then((res) => (res.statusCode === 200 ? res.body : undefined));
      this.answers.set(url, answer);
    }
    return answer;
  }
}

/** `block`: the v1 block (`GET /extended/v1/block/{hash}`, by block hash, as the original pushes it). */
export function blockPayload(ask: PayloadAsker, blockHash: string) {
  return ask.get(`/extended/v1/block/${blockHash}`);
}

/** `microblock`: `GET /extended/v1/microblock/{hash}`. */
export function microblockPayload(ask: PayloadAsker, microblockHash: string) {
  return ask.get(`/extended/v1/microblock/${microblockHash}`);
}

/**
 * `tx_update` (`transaction:<id>`) and `mempool`: `GET /extended/v1/tx/{id}?unanchored=true`, the mined tx
 * (in a microblock too, as the original pushes it) else the mempool tx.
 */
export function transactionPayload(ask: PayloadAsker, txId: string) {
  return ask.get(`/extended/v1/tx/${txId}?unanchored=true`);
}

/**
 * `address_tx_update` (`address-transaction:<p>`): `GET /extended/v1/address/{p}/{tx_id}/with_transfers`.
 * The route takes no `unanchored`: it answers a tx mined only in a microblock as it is (docs/upstream.md A.9),
 * as the original pushes it, so one form serves txs of blocks and of microblocks.
 */
export function addressTransactionPayload(ask: PayloadAsker, principal: string, txId: string) {
  return ask.get(`/extended/v1/address/${principal}/${txId}/with_transfers`);
}

/** `address_balance_update` (`address-stx-balance:<p>`) after a block: `GET /extended/v1/address/{p}/stx`. */
export function addressBalancePayload(ask: PayloadAsker, principal: string) {
  return ask.get(`/extended/v1/address/${principal}/stx`);
}

/**
 * `address_balance_update` after a change of the unconfirmed microblock stream (a microblock streamed, or a
 * micro-fork's orphaned txs): `GET /extended/v1/address/{p}/stx?unanchored=true`. The anchored answer
 * leaves the stream out, so it would not show the microblock tx the event is about; the original pushes the
 * balance at the microblock's height, the stream's txs included.
 */
export function addressBalanceWithStreamPayload(ask: PayloadAsker, principal: string) {
  return ask.get(`/extended/v1/address/${principal}/stx?unanchored=true`);
}

interface NftAssetEventJson {
  event_index: number;
  event_type: string;
  tx_id: string;
  asset: {
    asset_event_type: string;
    asset_id: string;
    sender: string;
    recipient: string;
    value: { hex: string; repr: string };
  };
}

/**
 * `nft_event`, `nft_asset_event`, `nft_collection_event`: one NFT event as the original pushes it (sender and
 * recipient when there are, asset, event type, value, tx id and index, block height, event index), read from
 * `GET /extended/v1/tx/{tx_id}?event_offset={i}&event_limit=1`: the tx's event `i` and where the tx is mined.
 */
export async function nftEventPayload(
  ask: PayloadAsker,
  txId: string,
  eventIndex: number,
): Promise<string | undefined> {
  const text = await ask.get(`/extended/v1/tx/${txId}?event_offset=${eventIndex}&event_limit=1`);
  if (text === undefined) return undefined;
  const tx = JSON.parse(text) as {
    tx_id: string;
    tx_index: number;
    block_height: number;
    events?: NftAssetEventJson[];
  };
  const event = tx.events?.find(
    (e) => e.event_index === eventIndex && e.event_type === 'non_fungible_token_asset',
  );
  if (!event) return undefined;
  const { asset } = event;
  return JSON.stringify({
    ...(asset.sender && { sender: asset.sender }),
    ...(asset.recipient && { recipient: asset.recipient }),
    asset_identifier: asset.asset_id,
    asset_event_type: asset.asset_event_type,
    value: asset.value,
    tx_id: tx.tx_id,
    tx_index: tx.tx_index,
    block_height: tx.block_height,
    event_index: event.event_index,
  });
}
