import {
  cvToHex,
  getAddressFromPrivateKey,
  makeContractCall,
  makeContractDeploy,
  makeSTXTokenTransfer,
  serializeTransaction,
  sponsorTransaction,
  type ClarityValue,
  type ClarityVersion,
  type StacksTransactionWire,
} from '@stacks/transactions';

// The tests' one builder of chain data: a small testnet chain of real signed transactions and the
// event-observer messages a stacks-node would send for them (`/new_block`, `/new_microblocks`,
// `/new_mempool_tx`, `/drop_mempool_tx`). `block()`, `microblock()`, `mempool()` and `drop()` send each message
// through the real ingest path (the Ingestor the observer server calls); `buildBlock()` and `buildMicroblock()`
// only build it, for tests that mutate a message or post it themselves (a chain without an Ingestor only
// builds). Larger chains come from the generator (src/devnet, see delivery.ts), recorded ones from ../shared.
// Events are whatever the test says the txs did: the indexer takes them as the node reports them.
// Every message sent is received at the time of a test clock (one second after the previous message).

/** Fixed test keys (not secrets: they only sign throwaway test txs). */
const KEYS = {
  alice: 'edf9aee84d9b7abc145504dde6726c64f369d37ee34ded868fabd876c26570bc01',
  bob: '753b7cc01a1a2e86221266a154af739463fce51219d97e4f856cd7200c3bd2a601',
  carol: '0d2f965b472a82efd5a96e6513c8b9f7edc725d5c96c7d35d6c722cedeb80d1b01',
  dave: '2d3a2bfb3ae6b7eb9a0a9d29a6a1f0ab3ee4b3d7e1b9a1e5b2d3a0a9c6c5d4e301',
  sponsor: '5a61e8b5a7b1d2c3e4f5061728394a5b6c7d8e9fa0b1c2d3e4f5061728394a5b01',
  miner: '3b9c0d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c01',
} as const;
export type KeyName = keyof typeof KEYS;

export function addressOf(key: KeyName): string {
  return getAddressFromPrivateKey(KEYS[key], 'testnet');
}

export interface BuiltTx {
  txid: string;
  raw: string;
  sender: string;
}

function built(tx: StacksTransactionWire, sender: string): BuiltTx {
  return { txid: `0x${tx.txid()}`, raw: `0x${serializeTransaction(tx)}`, sender };
}

interface Common {
  from: KeyName;
  fee: number;
  nonce: number;
  /** sponsored by this key, which pays `fee` (the origin pays nothing) */
  sponsor?: { key: KeyName; nonce: number };
}

/** The origin's signing options (a sponsored tx's origin pays no fee). */
function signing(common: Common) {
  return {
    senderKey: KEYS[common.from],
    fee: common.sponsor ? 0n : BigInt(common.fee),
    nonce: BigInt(common.nonce),
    network: 'testnet' as const,
    sponsored: common.sponsor !== undefined,
  };
}

async function finish(tx: StacksTransactionWire, common: Common): Promise<BuiltTx> {
  if (!common.sponsor) return built(tx, addressOf(common.from));
  const sponsored = await sponsorTransaction({
    transaction: tx,
    sponsorPrivateKey: KEYS[common.sponsor.key],
    fee: BigInt(common.fee),
    sponsorNonce: BigInt(common.sponsor.nonce),
    network: 'testnet',
  });
  return built(sponsored, addressOf(common.from));
}

export async function transferTx(opts: Common & { to: string; amount: number; memo?: string }) {
  const tx = await makeSTXTokenTransfer({
    recipient: opts.to,
    amount: BigInt(opts.amount),
    memo: opts.memo,
    ...signing(opts),
  });
  return finish(tx, opts);
}

/** A token transfer with the `stx_transfer_event` the node reports once it is mined. */
export async function transferWithEvent(
  opts: Common & { to: string; amount: number; memo?: string },
): Promise<MinedTx> {
  const tx = await transferTx(opts);
  return { tx, events: [ev.stxTransfer(tx.sender, opts.to, opts.amount)] };
}

export async function callTx(
  opts: Common & { contract: string; fn: string; args?: ClarityValue[] },
): Promise<BuiltTx> {
  const [contractAddress, contractName] = opts.contract.split('.');
  const tx = await makeContractCall({
    contractAddress,
    contractName,
    functionName: opts.fn,
    functionArgs: opts.args ?? [],
    ...signing(opts),
    postConditionMode: 'allow',
  });
  return finish(tx, opts);
}

export async function deployTx(
  opts: Common & {
    name: string;
    code: string;
    /** `null`: an unversioned smart contract (type 1); default: the library's (a versioned one, type 6) */
    clarityVersion?: ClarityVersion | null;
  },
): Promise<BuiltTx> {
  const tx = await makeContractDeploy({
    contractName: opts.name,
    codeBody: opts.code,
    ...(opts.clarityVersion !== undefined && { clarityVersion: opts.clarityVersion ?? undefined }),
    ...signing(opts),
    postConditionMode: 'allow',
  });
  return finish(tx, opts);
}

/** An event as the node reports it, without its txid and index (the block assigns them). */
export type EventSpec = { type: string } & Record<string, unknown>;

const amountOf = (n: number | bigint) => String(n);

export const ev = {
  stxTransfer: (sender: string, recipient: string, amount: number): EventSpec => ({
    type: 'stx_transfer_event',
    stx_transfer_event: { sender, recipient, amount: amountOf(amount), memo: '' },
  }),
  stxMint: (recipient: string, amount: number): EventSpec => ({
    type: 'stx_mint_event',
    stx_mint_event: { recipient, amount: amountOf(amount) },
  }),
  stxBurn: (sender: string, amount: number): EventSpec => ({
    type: 'stx_burn_event',
    stx_burn_event: { sender, amount: amountOf(amount) },
  }),
  stxLock: (lockedAddress: string, amount: number, unlockHeight: number, contract: string): EventSpec => ({
    type: 'stx_lock_event',
    stx_lock_event: {
      locked_amount: amountOf(amount),
      unlock_height: String(unlockHeight),
      locked_address: lockedAddress,
      contract_identifier: contract,
    },
  }),
  ftTransfer: (asset: string, sender: string, recipient: string, amount: number): EventSpec => ({
    type: 'ft_transfer_event',
    ft_transfer_event: { asset_identifier: asset, sender, recipient, amount: amountOf(amount) },
  }),
  ftMint: (asset: string, recipient: string, amount: number): EventSpec => ({
    type: 'ft_mint_event',
    ft_mint_event: { asset_identifier: asset, recipient, amount: amountOf(amount) },
  }),
  nftTransfer: (asset: string, sender: string, recipient: string, value: ClarityValue): EventSpec => ({
    type: 'nft_transfer_event',
    nft_transfer_event: { asset_identifier: asset, sender, recipient, raw_value: cvToHex(value) },
  }),
  nftMint: (asset: string, recipient: string, value: ClarityValue): EventSpec => ({
    type: 'nft_mint_event',
    nft_mint_event: { asset_identifier: asset, recipient, raw_value: cvToHex(value) },
  }),
  print: (contract: string, value: ClarityValue): EventSpec => ({
    type: 'contract_event',
    contract_event: { contract_identifier: contract, topic: 'print', raw_value: cvToHex(value) },
  }),
};

export interface MinedTx {
  tx: BuiltTx;
  events?: EventSpec[];
  /** default `success` */
  status?: 'success' | 'abort_by_response' | 'abort_by_post_condition';
}

export interface ChainBlock {
  height: number;
  index_block_hash: string;
  block_hash: string;
  burn_block_hash: string;
  burn_block_height: number;
  burn_block_time: number;
}

export interface ChainMicroblock {
  hash: string;
  sequence: number;
  parent: ChainBlock;
  txs: MinedTx[];
}

/** An event-observer message as a stacks-node would POST it. */
export interface ObserverMessage<Payload = unknown> {
  path: string;
  payload: Payload;
  /** the JSON text posted */
  body: string;
}

type Json = Record<string, unknown>;

function message<Payload>(path: string, payload: Payload): ObserverMessage<Payload> {
  return { path, payload, body: JSON.stringify(payload) };
}

interface BlockOptions {
  txs?: MinedTx[];
  parent?: ChainBlock;
  confirms?: ChainMicroblock[];
  minerRewards?: { recipient: string; coinbase: number }[];
  /** force-unlock burn heights the node announces (pox_v1..v4_unlock_height) */
  poxUnlockHeights?: { v1?: number; v2?: number; v3?: number; v4?: number };
}

interface MicroblockOptions {
  txs: MinedTx[];
  sequence?: number;
  parent?: ChainBlock;
  previous?: ChainMicroblock;
}

const RESULT_OK_TRUE = '0x0703';
const RESULT_ERR_UINT = '0x080100000000000000000000000000000001';
const ZERO_HASH = `0x${'0'.repeat(64)}`;
const CLOCK_START = Date.UTC(2024, 0, 1);
const CLOCK_STEP_MS = 1000;

/** Where a TestChain sends its messages: the Ingestor, or a real observer (`observerPoster`). */
export interface MessageTaker {
  take(path: string, body: string | Uint8Array, receivedAt?: Date): Promise<unknown>;
}

/**
 * What a TestChain sends through to post each message to a real observer (`serve`'s, at `observerUrl`), as
 * a node does; anything but 200 fails.
 */
export function observerPoster(observerUrl: string): MessageTaker {
  return {
    async take(path: string, body: string | Uint8Array) {
      const res = await fetch(`${observerUrl}${path}`, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json' },
      });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`${path}: the observer answered ${res.status}: ${text}`);
    },
  };
}

/** Builds blocks on any parent (forks included); sends them through the ingestor when it has one. */
export class TestChain {
  private counter = 0;
  private clock = CLOCK_START;
  /** every block built, sent or not */
  readonly blocks: ChainBlock[] = [];

  constructor(private readonly ingestor?: MessageTaker) {}

  /** Applies one observer message, received one clock step after the previous one; returns that time. */
  async send(built: ObserverMessage): Promise<Date> {
    if (!this.ingestor) throw new Error('this TestChain has no Ingestor: it only builds messages');
    this.clock += CLOCK_STEP_MS;
    const receivedAt = new Date(this.clock);
    await this.ingestor.take(built.path, built.body, receivedAt);
    return receivedAt;
  }

  private hash(tag: number): string {
    this.counter += 1;
    return `0x${tag.toString(16).padStart(2, '0')}${this.counter.toString(16).padStart(62, '0')}`;
  }

  get tip(): ChainBlock | undefined {
    return this.blocks.reduce<ChainBlock | undefined>(
      (best, b) => (!best || b.height > best.height ? b : best),
      undefined,
    );
  }

  private txJson(m: MinedTx, index: number, micro?: ChainMicroblock, parentMicro?: string) {
    const status = m.status ?? 'success';
    return {
      txid: m.tx.txid,
      tx_index: index,
      raw_tx: m.tx.raw,
      status,
      raw_result: status === 'success' ? RESULT_OK_TRUE : RESULT_ERR_UINT,
      execution_cost: { read_count: 1, read_length: 2, runtime: 3, write_count: 4, write_length: 5 },
      microblock_hash: micro?.hash ?? null,
      microblock_sequence: micro?.sequence ?? null,
      microblock_parent_hash: micro ? (parentMicro ?? micro.parent.block_hash) : null,
    };
  }

  private eventsJson(txs: MinedTx[], start = 0) {
    let index = start;
    return txs.flatMap((m) =>
      (m.events ?? []).map((e) => ({ ...e, txid: m.tx.txid, event_index: index++, committed: true })),
    );
  }

  /**
   * Mines a block on `parent` (default: the highest block) holding `txs`, after the txs of the microblocks
   * it confirms (`confirms`, the stream on its parent, in order), and sends its `/new_block`.
   */
  async block(opts: BlockOptions = {}): Promise<ChainBlock> {
    const { block, message } = this.buildBlock(opts);
    await this.send(message);
    return block;
  }

  /** The block `block()` would mine, and its `/new_block` message, not sent (the block counts as built). */
  buildBlock(opts: BlockOptions = {}): { block: ChainBlock; message: ObserverMessage<Json> } {
    const parent = opts.parent ?? this.tip;
    const height = parent ? parent.height + 1 : 1;
    const block: ChainBlock = {
      height,
      index_block_hash: this.hash(0xb1),
      block_hash: this.hash(0xb2),
      burn_block_hash: this.hash(0xbb),
      burn_block_height: 100 + height,
      burn_block_time: 1_600_000_000 + height * 600,
    };
    const confirms = opts.confirms ?? [];
    const streamed = confirms.flatMap((mb, i) =>
      mb.txs.map((m) => ({ m, mb, parentMicro: i > 0 ? confirms[i - 1].hash : undefined })),
    );
    const all = [...streamed.map((s) => s.m), ...(opts.txs ?? [])];
    const last = confirms[confirms.length - 1];
    const payload = {
      block_hash: block.block_hash,
      block_height: height,
      index_block_hash: block.index_block_hash,
      parent_index_block_hash: parent?.index_block_hash ?? ZERO_HASH,
      parent_block_hash: parent?.block_hash ?? ZERO_HASH,
      parent_microblock: last?.hash ?? ZERO_HASH,
      parent_microblock_sequence: last?.sequence ?? 0,
      burn_block_hash: block.burn_block_hash,
      burn_block_height: block.burn_block_height,
      burn_block_time: block.burn_block_time,
      parent_burn_block_hash: parent?.burn_block_hash ?? ZERO_HASH,
      parent_burn_block_height: parent?.burn_block_height ?? 0,
      parent_burn_block_timestamp: parent?.burn_block_time ?? 0,
      miner_txid: this.hash(0xee),
      ...Object.fromEntries(
        Object.entries(opts.poxUnlockHeights ?? {}).map(([v, h]) => [`pox_${v}_unlock_height`, h]),
      ),
      matured_miner_rewards: (opts.minerRewards ?? []).map((r) => ({
        recipient: r.recipient,
        miner_address: r.recipient,
        coinbase_amount: String(r.coinbase),
        tx_fees_anchored: '0',
        tx_fees_streamed_confirmed: '0',
        tx_fees_streamed_produced: '0',
        from_index_consensus_hash: this.hash(0xcc),
        from_stacks_block_hash: this.hash(0xcd),
      })),
      transactions: [
        ...streamed.map((s, i) => this.txJson(s.m, i, s.mb, s.parentMicro)),
        ...(opts.txs ?? []).map((m, i) => this.txJson(m, streamed.length + i)),
      ],
      events: this.eventsJson(all),
    };
    this.blocks.push(block);
    return { block, message: message('/new_block', payload) };
  }

  /** Streams microblock `sequence` on `parent` (default: the tip), after `previous` in the stream. */
  async microblock(opts: MicroblockOptions): Promise<ChainMicroblock> {
    const { microblock, message } = this.buildMicroblock(opts);
    await this.send(message);
    return microblock;
  }

  /** The microblock `microblock()` would stream, and its `/new_microblocks` message, not sent. */
  buildMicroblock(opts: MicroblockOptions): {
    microblock: ChainMicroblock;
    message: ObserverMessage<Json>;
  } {
    const parent = opts.parent ?? this.tip!;
    const micro: ChainMicroblock = {
      hash: this.hash(0xa1),
      sequence: opts.sequence ?? (opts.previous ? opts.previous.sequence + 1 : 0),
      parent,
      txs: opts.txs,
    };
    const payload = {
      parent_index_block_hash: parent.index_block_hash,
      burn_block_hash: this.hash(0xbb),
      burn_block_height: parent.burn_block_height,
      burn_block_timestamp: parent.burn_block_time + 60,
      transactions: opts.txs.map((m, i) => this.txJson(m, i, micro, opts.previous?.hash)),
      events: this.eventsJson(opts.txs),
    };
    return { microblock: micro, message: message('/new_microblocks', payload) };
  }

  /** The node accepted these txs into its mempool; returns when the indexer received them. */
  mempool(txs: BuiltTx[]): Promise<Date> {
    return this.send(
      message(
        '/new_mempool_tx',
        txs.map((t) => t.raw),
      ),
    );
  }

  /** The node dropped these txs from its mempool (`replacedBy`: the tx that replaced them, if any). */
  async drop(
    txids: string[],
    reason = 'StaleGarbageCollect',
    replacedBy: string | null = null,
  ): Promise<void> {
    await this.send(message('/drop_mempool_tx', { dropped_txids: txids, reason, new_txid: replacedBy }));
  }
}
