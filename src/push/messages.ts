import { RPC_EVENT, type Topic } from './topics.js';

// One event as each channel sends it, built from the JSON text of the read endpoint that answers for it
// (payloads.ts) without parsing and serializing it again per subscriber: the text is written once per
// channel (per spelling of the topic, for socket.io) and the same string goes to every subscriber.
//
// - WebSocket: a JSON-RPC 2.0 notification whose method is the topic's event (`tx_update`, ...) and whose
//   params are the payload; for an address topic the payload is prefixed with the address (and, for
//   `address_tx_update`, the tx's id, status and type), as the official client's types say.
// - socket.io: an event named as the client subscribed (`transaction:0x…`) whose arguments are the payload,
//   after the address (address topics) or the asset identifier and value (NFT asset and collection topics).

export class PushMessage {
  private rpc: string | undefined;
  private readonly packets = new Map<string, string>();

  constructor(
    readonly topic: Topic,
    /** the JSON-RPC params, JSON text */
    private readonly rpcParams: string,
    /** the socket.io event's arguments, each JSON text */
    private readonly ioArgs: string[],
  ) {}

  /** The JSON-RPC notification. */
  rpcText(): string {
    return (this.rpc ??= `{"jsonrpc":"2.0","method":"${RPC_EVENT[this.topic.kind]}","params":${this.rpcParams}}`);
  }

  /**
   * The socket.io packet of the event named `name`, as socket.io-parser encodes an EVENT of the main
   * namespace (protocol 5, socket.io 3 and 4): `2` then the JSON array of the name and the arguments. It is
   * written to the engine.io connection as is, so a payload is not serialized once per subscriber.
   */
  ioPacket(name: string): string {
    let packet = this.packets.get(name);
    if (packet === undefined) {
      packet = `2[${[JSON.stringify(name), ...this.ioArgs].join(',')}]`;
      this.packets.set(name, packet);
    }
    return packet;
  }
}

/** `{"address":…,` + the rest of an object's JSON text: the address first, as upstream spreads it. */
function withLeadingMembers(members: Record<string, unknown>, objectText: string): string {
  const lead = JSON.stringify(members).slice(0, -1);
  const rest = objectText.trim().slice(1);
  return rest.trim() === '}' ? `${lead}}` : `${lead},${rest}`;
}

/** A payload sent as it is: block, microblock, mempool, tx update, NFT event (nft-event topic). */
export function plainMessage(topic: Topic, payload: string): PushMessage {
  return new PushMessage(topic, payload, [payload]);
}

/** An address's transaction: `GET /extended/v1/address/{p}/{tx_id}/with_transfers`'s JSON. */
export function addressTransactionMessage(
  topic: Topic & { principal: string },
  payload: string,
): PushMessage {
  const { tx } = JSON.parse(payload) as { tx: { tx_id: string; tx_status: string; tx_type: string } };
  const params = withLeadingMembers(
    { address: topic.principal, tx_id: tx.tx_id, tx_status: tx.tx_status, tx_type: tx.tx_type },
    payload,
  );
  return new PushMessage(topic, params, [JSON.stringify(topic.principal), payload]);
}

/** An address's STX balance: `GET /extended/v1/address/{p}/stx`'s JSON. */
export function addressBalanceMessage(topic: Topic & { principal: string }, payload: string): PushMessage {
  return new PushMessage(topic, withLeadingMembers({ address: topic.principal }, payload), [
    JSON.stringify(topic.principal),
    payload,
  ]);
}

/** An NFT event on the asset or collection topic: socket.io names the asset (and value) first. */
export function nftTopicMessage(
  topic: Topic & { assetIdentifier: string; value?: string },
  payload: string,
): PushMessage {
  const lead = [
    JSON.stringify(topic.assetIdentifier),
    ...(topic.value !== undefined ? [JSON.stringify(topic.value)] : []),
  ];
  return new PushMessage(topic, payload, [...lead, payload]);
}
