import { isValidContractId, isValidPrincipal } from '../chain/address.js';

// The topics a client subscribes to, as both channels name them. The socket.io name is the topic's key
// everywhere (subscriptions, metrics, the socket.io room and event name): `block`, `transaction:0x…`,
// `address-transaction:SP…`; the WebSocket JSON-RPC channel names the same topics by an `event` and its
// parameters (`{ event: 'tx_update', tx_id }`), which `topicOfRpcParams` turns into the same key.

/** The kinds of topic: the socket.io name, or its prefix before `:` (a bounded metrics label). */
export const TOPIC_KINDS = [
  'block',
  'microblock',
  'mempool',
  'transaction',
  'address-transaction',
  'address-stx-balance',
  'nft-event',
  'nft-asset-event',
  'nft-collection-event',
] as const;
export type TopicKind = (typeof TOPIC_KINDS)[number];

/** Each kind's socket.io topic name, its parameters in angle brackets (what a client writes). */
export const TOPIC_NAMES: Record<TopicKind, string> = {
  block: 'block',
  microblock: 'microblock',
  mempool: 'mempool',
  transaction: 'transaction:<tx id>',
  'address-transaction': 'address-transaction:<principal>',
  'address-stx-balance': 'address-stx-balance:<principal>',
  'nft-event': 'nft-event',
  'nft-asset-event': 'nft-asset-event:<asset>+<value>',
  'nft-collection-event': 'nft-collection-event:<asset>',
};

export type Topic =
  | { kind: 'block' | 'microblock' | 'mempool' | 'nft-event'; key: string }
  | { kind: 'transaction'; key: string; txId: string }
  | { kind: 'address-transaction' | 'address-stx-balance'; key: string; principal: string }
  | { kind: 'nft-asset-event'; key: string; assetIdentifier: string; value: string }
  | { kind: 'nft-collection-event'; key: string; assetIdentifier: string };

/** A subscription that names no valid topic; the message says why, for the client. */
export class TopicError extends Error {}

const TX_ID = /^(0x)?[0-9a-fA-F]{64}$/;
const HEX_VALUE = /^0x([0-9a-fA-F]{2})+$/;

/** A tx id as the API writes it: `0x` and lower-case hex. */
function txIdOf(given: unknown): string {
  if (typeof given !== 'string' || !TX_ID.test(given)) {
    throw new TopicError(`tx_id must be a transaction id (64 hex digits, 0x optional); got ${show(given)}`);
  }
  const hex = given.toLowerCase();
  return hex.startsWith('0x') ? hex : `0x${hex}`;
}

function principalOf(given: unknown): string {
  if (typeof given !== 'string' || !isValidPrincipal(given)) {
    throw new TopicError(`address must be a Stacks address or a contract id; got ${show(given)}`);
  }
  return given;
}

/** `<contract id>::<asset name>`, an NFT class. */
function assetIdentifierOf(given: unknown): string {
  const [contract, name, ...rest] = typeof given === 'string' ? given.split('::') : [];
  if (!contract || !name || rest.length > 0 || !isValidContractId(contract)) {
    throw new TopicError(
      `asset_identifier must be <contract id>::<asset name> (e.g. SP2X0TZ59D5SZ8ACQ6YMCHHNR2ZN51Z32E2CJ173.the-explorer-guild::The-Explorer-Guild); got ${show(given)}`,
    );
  }
  return given as string;
}

function valueOf(given: unknown): string {
  if (typeof given !== 'string' || !HEX_VALUE.test(given)) {
    throw new TopicError(
      `value must be a Clarity value in hex (0x and an even number of hex digits); got ${show(given)}`,
    );
  }
  return given.toLowerCase();
}

const show = (value: unknown) =>
  typeof value === 'string' ? JSON.stringify(value.slice(0, 120)) : String(value);

export const blockTopic: Topic = { kind: 'block', key: 'block' };
export const microblockTopic: Topic = { kind: 'microblock', key: 'microblock' };
export const mempoolTopic: Topic = { kind: 'mempool', key: 'mempool' };
export const nftEventTopic: Topic = { kind: 'nft-event', key: 'nft-event' };

export const transactionTopic = (txId: string): Topic => ({
  kind: 'transaction',
  key: `transaction:${txId}`,
  txId,
});
export const addressTransactionTopic = (principal: string): Topic => ({
  kind: 'address-transaction',
  key: `address-transaction:${principal}`,
  principal,
});
export const addressBalanceTopic = (principal: string): Topic => ({
  kind: 'address-stx-balance',
  key: `address-stx-balance:${principal}`,
  principal,
});
export const nftAssetTopic = (assetIdentifier: string, value: string): Topic => ({
  kind: 'nft-asset-event',
  key: `nft-asset-event:${assetIdentifier}+${value}`,
  assetIdentifier,
  value,
});
export const nftCollectionTopic = (assetIdentifier: string): Topic => ({
  kind: 'nft-collection-event',
  key: `nft-collection-event:${assetIdentifier}`,
  assetIdentifier,
});

/** A socket.io topic name (`block`, `transaction:0x…`, `nft-asset-event:<asset>+<value>`, ...). */
export function topicOfName(name: unknown): Topic {
  if (typeof name !== 'string') throw new TopicError(`a topic is a string; got ${show(name)}`);
  const colon = name.indexOf(':');
  const prefix = colon < 0 ? name : name.slice(0, colon);
  const rest = name.slice(colon + 1);
  switch (colon < 0 ? name : prefix) {
    case 'block':
      return blockTopic;
    case 'microblock':
      return microblockTopic;
    case 'mempool':
      return mempoolTopic;
    case 'nft-event':
      return nftEventTopic;
    case 'transaction':
      return transactionTopic(txIdOf(rest));
    case 'address-transaction':
      return addressTransactionTopic(principalOf(rest));
    case 'address-stx-balance':
      return addressBalanceTopic(principalOf(rest));
    case 'nft-asset-event': {
      const plus = rest.lastIndexOf('+');
      return nftAssetTopic(assetIdentifierOf(rest.slice(0, plus)), valueOf(rest.slice(plus + 1)));
    }
    case 'nft-collection-event':
      return nftCollectionTopic(assetIdentifierOf(rest));
    default:
      throw new TopicError(`unknown topic ${show(name)}: ${Object.values(TOPIC_NAMES).join(', ')}`);
  }
}

/** The JSON-RPC `event` of each topic kind: the name of the method its notifications carry. */
export const RPC_EVENT: Record<TopicKind, string> = {
  block: 'block',
  microblock: 'microblock',
  mempool: 'mempool',
  transaction: 'tx_update',
  'address-transaction': 'address_tx_update',
  'address-stx-balance': 'address_balance_update',
  'nft-event': 'nft_event',
  'nft-asset-event': 'nft_asset_event',
  'nft-collection-event': 'nft_collection_event',
};

/** The params of a JSON-RPC `subscribe` or `unsubscribe` (`{ event: 'tx_update', tx_id }`, ...). */
export function topicOfRpcParams(params: unknown): Topic {
  const p = (typeof params === 'object' && params !== null ? params : {}) as Record<string, unknown>;
  switch (p.event) {
    case 'block':
      return blockTopic;
    case 'microblock':
      return microblockTopic;
    case 'mempool':
      return mempoolTopic;
    case 'nft_event':
      return nftEventTopic;
    case 'tx_update':
      return transactionTopic(txIdOf(p.tx_id));
    case 'address_tx_update':
      return addressTransactionTopic(principalOf(p.address));
    case 'address_balance_update':
      return addressBalanceTopic(principalOf(p.address));
    case 'nft_asset_event':
      return nftAssetTopic(assetIdentifierOf(p.asset_identifier), valueOf(p.value));
    case 'nft_collection_event':
      return nftCollectionTopic(assetIdentifierOf(p.asset_identifier));
    default:
      throw new TopicError(
        `params.event must be one of ${Object.values(RPC_EVENT).join(', ')}; got ${show(p.event)}`,
      );
  }
}

/** What a JSON-RPC subscription answers: the topic's parameters as the server reads them. */
export function rpcSubscriptionResult(topic: Topic): Record<string, string> {
  switch (topic.kind) {
    case 'transaction':
      return { tx_id: topic.txId };
    case 'address-transaction':
    case 'address-stx-balance':
      return { address: topic.principal };
    case 'nft-asset-event':
      return { asset_identifier: topic.assetIdentifier, value: topic.value };
    case 'nft-collection-event':
      return { asset_identifier: topic.assetIdentifier };
    default:
      return {};
  }
}
