import { InvalidMessageError } from '../errors.js';
import {
  clarityHexToRepr,
  BURNCHAIN_OP_RAW_TX,
  decodeBurnchainOpTx,
  decodeTransaction,
  poxLockChange,
  type BlockTxJson,
  type DecodedTx,
} from '../chain/index.js';
import {
  eventBodyValidators,
  isIndexedEventType,
  type BlockTransaction,
  type IndexedEventType,
  type ChainEvent,
} from '../protocol/payloads.js';
import {
  type ChainRows,
  type DecodedTxColumns,
  type EventRow,
  type PrincipalTxRow,
  type SmartContractRow,
  type TxRow,
} from '../store/schema/rows.js';
import {
  ANCHORED_SEQUENCE,
  AnchorMode,
  AssetEventType,
  EventKind,
  PostConditionMode,
  TxStatus,
} from '../store/schema/codes.js';

/** How deep a contract ABI may nest: Clarity types nest at most 32 deep, a few JSON levels each. */
const MAX_ABI_DEPTH = 256;

/** True when `value` nests objects/arrays deeper than `max` (checked without recursion). */
function nestedDeeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth >= max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return false;
}

/** Counts the events of types this index does not keep, to log them once per message. */
export type SkippedEvents = Map<string, number>;

export function logSkippedEvents(
  skipped: SkippedEvents,
  logger: { warn: (obj: object, msg: string) => void },
  where: object,
): void {
  for (const [type, count] of skipped)
    logger.warn({ ...where, type, count }, 'event type not indexed: skipped');
}

/**
 * The block a batch of transactions is in, as its rows name it: an anchored block, or for the unconfirmed
 * microblock stream, the block to come above the tip.
 */
export interface ContainingBlock {
  index_block_hash: string;
  block_hash: string;
  block_height: number;
  block_time: number;
  burn_block_time: number;
  burn_block_height: number;
  parent_burn_block_time: number;
  parent_block_hash: string;
  parent_index_block_hash: string;
  canonical: boolean;
}

export function decodedColumns(txId: string, rawTx: string, decoded: DecodedTx): DecodedTxColumns {
  return {
    tx_id: txId,
    type_id: decoded.typeId,
    nonce: decoded.nonce,
    fee_rate: decoded.feeRate,
    sender_address: decoded.senderAddress,
    sponsored: decoded.sponsored,
    sponsor_address: decoded.sponsorAddress,
    sponsor_nonce: decoded.sponsorNonce,
    anchor_mode: AnchorMode[decoded.anchorMode],
    post_condition_mode: PostConditionMode[decoded.postConditionMode],
    post_conditions: decoded.postConditions,
    payload: decoded.payload,
    token_transfer_recipient: decoded.tokenTransferRecipient,
    token_transfer_amount: decoded.tokenTransferAmount,
    contract_call_contract_id: decoded.contractCallContractId,
    smart_contract_contract_id: decoded.smartContractContractId,
    raw_tx: rawTx,
    tx_size: decoded.byteLength,
  };
}

/** `rawTx`: its hex, or its bytes when already decoded from hex (for the id check). */
export function decodeRawTx(rawTx: string | Buffer, txId: string): DecodedTx {
  try {
    return decodeTransaction(rawTx);
  } catch (err) {
    throw new InvalidMessageError(`transaction ${txId} cannot be decoded: ${(err as Error).message}`);
  }
}

function txStatus(status: string, txId: string): number {
  const code = (TxStatus as Record<string, number>)[status];
  if (code === undefined) throw new InvalidMessageError(`transaction ${txId} has unknown status "${status}"`);
  return code;
}

function str(body: Record<string, unknown>, key: string): string | null {
  const v = body[key];
  return v === undefined || v === null ? null : String(v);
}

/** Where a row sits: the columns every row of a tx shares. */
interface Located {
  tx_id: string;
  index_block_hash: string;
  microblock_hash: string;
  block_height: number;
  tx_index: number;
  microblock_sequence: number;
  canonical: boolean;
  microblock_canonical: boolean;
}

/**
 * The event as a row, or null for event types this index does not keep. (Rows are built as one literal
 * and then filled in: object spreads into a literal this size take V8's slow path.)
 */
function eventRow(event: ChainEvent, at: Located, eventIndex: number): EventRow | null {
  if (!isIndexedEventType(event.type)) return null;
  const body = eventBody(event, event.type);
  const [family, action] = splitEventType(event.type);
  if (family === 'other') return null;
  const row: EventRow = {
    tx_id: at.tx_id,
    index_block_hash: at.index_block_hash,
    microblock_hash: at.microblock_hash,
    event_index: eventIndex,
    block_height: at.block_height,
    tx_index: at.tx_index,
    microblock_sequence: at.microblock_sequence,
    canonical: at.canonical,
    microblock_canonical: at.microblock_canonical,
    kind: 0,
    asset_event_type: null,
    sender: null,
    recipient: null,
    amount: null,
    asset_identifier: null,
    value: null,
    value_repr: null,
    memo: null,
    contract_id: null,
    topic: null,
    locked_address: null,
    unlock_height: null,
    pox_name: null,
  };
  fillEventColumns(row, family, action, body);
  return row;
}

/** The event's body, checked against its type's schema. */
function eventBody(event: ChainEvent, type: IndexedEventType): Record<string, unknown> {
  const body = event[type] as Record<string, unknown> | undefined;
  if (!body || typeof body !== 'object') {
    throw new InvalidMessageError(`event ${event.event_index} of ${event.txid} has no "${type}" body`);
  }
  const validator = eventBodyValidators[type];
  if (!validator.Check(body)) {
    const [first] = validator.Errors(body);
    throw new InvalidMessageError(
      `event ${event.event_index} of ${event.txid}: invalid ${type}` +
        `${first?.instancePath ? ` at ${first.instancePath}` : ''}: ${first?.message ?? 'unexpected shape'}`,
    );
  }
  return body;
}

/** Fills the columns of an event row that its family (`stx`, `ft`, `nft`, `contract`) and action say. */
function fillEventColumns(
  row: EventRow,
  family: string,
  action: string,
  body: Record<string, unknown>,
): void {
  switch (family) {
    case 'stx':
      if (action === 'lock') {
        row.kind = EventKind.stxLock;
        row.amount = str(body, 'locked_amount');
        row.locked_address = str(body, 'locked_address');
        row.unlock_height = Number(body.unlock_height);
        row.contract_id = str(body, 'contract_identifier');
        return;
      }
      row.kind = EventKind.stxAsset;
      row.asset_event_type = AssetEventType[action as keyof typeof AssetEventType];
      row.sender = str(body, 'sender');
      row.recipient = str(body, 'recipient');
      row.amount = str(body, 'amount');
      // The node sends "" for a transfer without memo: the API then shows no memo key.
      row.memo =
        typeof body.memo === 'string' && body.memo.replace(/^0x/, '') !== ''
          ? '0x' + body.memo.replace(/^0x/, '')
          : null;
      return;
    case 'ft':
      row.kind = EventKind.ftAsset;
      row.asset_event_type = AssetEventType[action as keyof typeof AssetEventType];
      row.sender = str(body, 'sender');
      row.recipient = str(body, 'recipient');
      row.amount = str(body, 'amount');
      row.asset_identifier = str(body, 'asset_identifier');
      return;
    case 'nft':
      row.kind = EventKind.nftAsset;
      row.asset_event_type = AssetEventType[action as keyof typeof AssetEventType];
      row.sender = str(body, 'sender');
      row.recipient = str(body, 'recipient');
      row.asset_identifier = str(body, 'asset_identifier');
      setClarityValue(row, str(body, 'raw_value'));
      return;
    default: {
      row.kind = EventKind.contractLog;
      row.contract_id = str(body, 'contract_identifier');
      row.topic = str(body, 'topic');
      setClarityValue(row, str(body, 'raw_value'));
      // A PoX operation that changes the stacker's lock also records that lock (stacker, amount, end).
      const lock = row.value ? poxLockChange(row.contract_id ?? '', row.topic ?? '', row.value) : null;
      if (lock) {
        row.pox_name = lock.name;
        row.locked_address = lock.stacker;
        row.amount = lock.locked;
        row.unlock_height = lock.unlockHeight;
      }
      return;
    }
  }
}

function setClarityValue(row: EventRow, hex: string | null): void {
  const { value, value_repr } = clarityValue(hex);
  row.value = value;
  row.value_repr = value_repr;
}

function clarityValue(hex: string | null): { value: string | null; value_repr: string | null } {
  if (hex === null) return { value: null, value_repr: null };
  const value = hex.startsWith('0x') ? hex : '0x' + hex;
  try {
    return { value, value_repr: clarityHexToRepr(value) };
  } catch (err) {
    throw new InvalidMessageError(
      `event value ${value.slice(0, 40)} is not a Clarity value: ${(err as Error).message}`,
    );
  }
}

const EVENT_TYPES: Record<string, [string, string]> = {
  stx_transfer_event: ['stx', 'transfer'],
  stx_mint_event: ['stx', 'mint'],
  stx_burn_event: ['stx', 'burn'],
  stx_lock_event: ['stx', 'lock'],
  ft_transfer_event: ['ft', 'transfer'],
  ft_mint_event: ['ft', 'mint'],
  ft_burn_event: ['ft', 'burn'],
  nft_transfer_event: ['nft', 'transfer'],
  nft_mint_event: ['nft', 'mint'],
  nft_burn_event: ['nft', 'burn'],
  contract_event: ['contract', 'log'],
};

function splitEventType(type: string): [string, string] {
  return EVENT_TYPES[type] ?? ['other', ''];
}

/**
 * Decodes the transactions and events of a block or microblock message into rows. Events of failed
 * transactions and uncommitted events are dropped; each transaction's events are renumbered 0..n-1 in
 * the node's order. Burnchain-op transactions without events are skipped, as upstream does. Events
 * of types the index does not keep are left out and counted in `skipped` (a newer node may send new types).
 * `rawTxBytes`: each transaction's raw bytes, in the order of `transactions`, when the id check decoded
 * them from hex already (`checkBlockMessage`); else the codec decodes the hex.
 */
export function buildChainRows(
  transactions: BlockTransaction[],
  events: ChainEvent[],
  block: ContainingBlock,
  isMainnet: boolean,
  skipped?: SkippedEvents,
  rawTxBytes?: readonly (Buffer | undefined)[],
): ChainRows {
  const eventsByTx = new Map<string, ChainEvent[]>();
  for (const event of events) {
    const list = eventsByTx.get(event.txid);
    if (list) list.push(event);
    else eventsByTx.set(event.txid, [event]);
  }

  const rows: ChainRows = { txs: [], events: [], smartContracts: [], principalTxs: [] };
  const seen = new Set<string>();
  for (let i = 0; i < transactions.length; i++) {
    const tx = transactions[i];
    if (seen.has(tx.txid))
      throw new InvalidMessageError(`transaction ${tx.txid} appears twice in the message`);
    seen.add(tx.txid);
    const txEvents = (eventsByTx.get(tx.txid) ?? []).sort((a, b) => a.event_index - b.event_index);
    let decoded: DecodedTx | null;
    if (tx.raw_tx === BURNCHAIN_OP_RAW_TX) {
      try {
        decoded = decodeBurnchainOpTx(tx as BlockTxJson, txEvents, isMainnet, block.burn_block_height);
      } catch (err) {
        throw new InvalidMessageError(
          `burnchain transaction ${tx.txid} cannot be reconstructed: ${(err as Error).message}`,
        );
      }
      if (!decoded) continue;
    } else {
      decoded = decodeRawTx(rawTxBytes?.[i] ?? tx.raw_tx, tx.txid);
    }
    addTxRows(rows, tx, decoded, txEvents, block, skipped);
  }
  return rows;
}

/** Adds a transaction's rows: the tx, its events, one per principal it touches, and its contract. */
function addTxRows(
  rows: ChainRows,
  tx: BlockTransaction,
  decoded: DecodedTx,
  txEvents: ChainEvent[],
  block: ContainingBlock,
  skipped: SkippedEvents | undefined,
): void {
  const status = txStatus(tx.status, tx.txid);
  const microblockHash = tx.microblock_hash ?? '';
  const microblockSequence = tx.microblock_hash ? (tx.microblock_sequence ?? 0) : ANCHORED_SEQUENCE;
  const located: Located = {
    tx_id: tx.txid,
    index_block_hash: block.index_block_hash,
    microblock_hash: microblockHash,
    block_height: block.block_height,
    tx_index: tx.tx_index,
    microblock_sequence: microblockSequence,
    canonical: block.canonical,
    microblock_canonical: true,
  };

  const principals = new Set<string>();
  principals.add(decoded.senderAddress);
  if (decoded.tokenTransferRecipient) principals.add(decoded.tokenTransferRecipient);
  if (decoded.contractCallContractId) principals.add(decoded.contractCallContractId);
  if (decoded.smartContractContractId) principals.add(decoded.smartContractContractId);

  const keptEvents = status === TxStatus.success ? txEvents.filter((e) => e.committed !== false) : [];
  const eventCount = addEventRows(rows, keptEvents, located, principals, skipped);
  rows.txs.push(txRow(tx, decoded, block, located, status, eventCount));

  for (const principal of principals) {
    const row: PrincipalTxRow = {
      principal,
      tx_id: tx.txid,
      index_block_hash: block.index_block_hash,
      microblock_hash: microblockHash,
      block_height: block.block_height,
      microblock_sequence: microblockSequence,
      tx_index: tx.tx_index,
      canonical: block.canonical,
      microblock_canonical: true,
    };
    rows.principalTxs.push(row);
  }

  const abi = tx.contract_abi ?? tx.contract_interface ?? null;
  if (decoded.smartContractContractId && status === TxStatus.success) {
    const contract: SmartContractRow = {
      contract_id: decoded.smartContractContractId,
      tx_id: tx.txid,
      index_block_hash: block.index_block_hash,
      microblock_hash: microblockHash,
      block_height: block.block_height,
      clarity_version: clarityVersion(decoded),
      abi: contractAbi(abi, tx.txid),
      canonical: block.canonical,
      microblock_canonical: true,
    };
    rows.smartContracts.push(contract);
  }
}

/**
 * Adds the rows of a tx's kept events, numbered 0..n-1, and the senders and recipients of its asset events
 * to `principals`. Returns how many rows it added.
 */
function addEventRows(
  rows: ChainRows,
  keptEvents: ChainEvent[],
  located: Located,
  principals: Set<string>,
  skipped: SkippedEvents | undefined,
): number {
  let eventIndex = 0;
  for (const event of keptEvents) {
    const row = eventRow(event, located, eventIndex);
    if (!row) {
      skipped?.set(event.type, (skipped.get(event.type) ?? 0) + 1);
      continue;
    }
    eventIndex++;
    rows.events.push(row);
    if (
      row.kind === EventKind.stxAsset ||
      row.kind === EventKind.ftAsset ||
      row.kind === EventKind.nftAsset
    ) {
      if (row.sender) principals.add(row.sender);
      if (row.recipient) principals.add(row.recipient);
    }
  }
  return eventIndex;
}

function txRow(
  tx: BlockTransaction,
  decoded: DecodedTx,
  block: ContainingBlock,
  located: Located,
  status: number,
  eventCount: number,
): TxRow {
  const cost = tx.execution_cost;
  // Object.assign onto the decoded columns, not a literal spreading them: with the spread, building a
  // block's rows took 72 µs per tx, with this 14 (100 blocks of 200 txs, buildChainRows alone)
  return Object.assign(decodedColumns(tx.txid, tx.raw_tx, decoded), {
    index_block_hash: block.index_block_hash,
    microblock_hash: located.microblock_hash,
    block_hash: block.block_hash,
    block_height: block.block_height,
    block_time: block.block_time,
    burn_block_time: block.burn_block_time,
    burn_block_height: block.burn_block_height,
    parent_burn_block_time: block.parent_burn_block_time,
    parent_block_hash: block.parent_block_hash,
    parent_index_block_hash: block.parent_index_block_hash,
    tx_index: tx.tx_index,
    microblock_sequence: located.microblock_sequence,
    canonical: block.canonical,
    microblock_canonical: true,
    status,
    raw_result: tx.raw_result,
    result_repr: resultRepr(tx.raw_result, tx.txid),
    vm_error: tx.vm_error ?? null,
    event_count: eventCount,
    execution_cost_read_count: cost?.read_count ?? 0,
    execution_cost_read_length: cost?.read_length ?? 0,
    execution_cost_runtime: cost?.runtime ?? 0,
    execution_cost_write_count: cost?.write_count ?? 0,
    execution_cost_write_length: cost?.write_length ?? 0,
  });
}

/** The ABI as the node sent it (an object, or older nodes: its JSON text), within a sane nesting depth. */
function contractAbi(abi: unknown, txId: string): unknown {
  let value = abi;
  if (typeof abi === 'string') {
    try {
      value = JSON.parse(abi);
    } catch (err) {
      throw new InvalidMessageError(`contract ABI of ${txId} is not JSON: ${(err as Error).message}`);
    }
  }
  if (nestedDeeperThan(value, MAX_ABI_DEPTH)) {
    throw new InvalidMessageError(`contract ABI of ${txId} nests deeper than ${MAX_ABI_DEPTH} levels`);
  }
  return value;
}

function resultRepr(rawResult: string, txId: string): string {
  try {
    return clarityHexToRepr(rawResult);
  } catch (err) {
    throw new InvalidMessageError(`result of ${txId} is not a Clarity value: ${(err as Error).message}`);
  }
}

function clarityVersion(decoded: DecodedTx): number | null {
  const sc = decoded.payload.smart_contract as { clarity_version?: number | null } | undefined;
  return sc?.clarity_version ?? null;
}
