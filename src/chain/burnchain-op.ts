// Burnchain-op transactions (`raw_tx == "0x00"`): the node gives no tx bytes, so a tx is rebuilt from its
// events and `burnchain_op`, following the original API's reconstruction rules.
import { BOOT_ADDRESS_MAINNET, BOOT_ADDRESS_TESTNET, parsePrincipal } from './address.js';
import { hexToBuffer } from './bytes.js';
import { decodeClarityValueList, parseClarityValue, type ClarityTree } from './clarity.js';
import {
  decodeBtcAddress,
  poxAddressFromStacksAddress,
  roundTripPoxAddress,
  type PoxAddress,
} from './pox-address.js';
import type { DecodedTx, FunctionArgJson } from './transaction.js';

/** The `raw_tx` of a burnchain-op tx: no bytes (its id is the burnchain operation's). */
export const BURNCHAIN_OP_RAW_TX = '0x00';

/** The fields of a `/new_block` transaction entry used here. */
export interface BlockTxJson {
  txid: string;
  raw_tx: string;
  raw_result: string;
  burnchain_op?: Record<string, unknown> | null;
  [key: string]: unknown;
}

/** A `/new_block` event entry (`{txid, event_index, committed, type, <type>: {...}}`). */
export interface EventJson {
  txid: string;
  type: string;
  [key: string]: unknown;
}

const POX_PRINT_CONTRACTS = new Set(
  [BOOT_ADDRESS_MAINNET, BOOT_ADDRESS_TESTNET].flatMap((a) =>
    ['pox-2', 'pox-3', 'pox-4'].map((n) => `${a}.${n}`),
  ),
);
const SUBNET_CONTRACTS = new Set([`${BOOT_ADDRESS_MAINNET}.subnet`, `${BOOT_ADDRESS_TESTNET}.subnet`]);

// --- Clarity serialization of the reconstructed arguments ------------------------------------

function uintBytes(value: bigint | number | string): Buffer {
  const v = BigInt(value);
  const out = Buffer.alloc(17);
  out[0] = 0x01;
  out.writeBigUInt64BE(BigInt.asUintN(64, v >> 64n), 1);
  out.writeBigUInt64BE(BigInt.asUintN(64, v), 9);
  return out;
}

function bufferBytes(data: Uint8Array): Buffer {
  const out = Buffer.alloc(5 + data.length);
  out[0] = 0x02;
  out.writeUInt32BE(data.length, 1);
  out.set(data, 5);
  return out;
}

function principalBytes(principal: string): Buffer {
  const { version, hash160, contractName } = parsePrincipal(principal);
  const name = contractName === null ? null : Buffer.from(contractName, 'utf8');
  const out = Buffer.alloc(22 + (name ? 1 + name.length : 0));
  out[0] = name ? 0x06 : 0x05;
  out[1] = version;
  out.set(hash160, 2);
  if (name) {
    out[22] = name.length;
    out.set(name, 23);
  }
  return out;
}

function asciiBytes(s: string): Buffer {
  const data = Buffer.from(s, 'latin1');
  const out = Buffer.alloc(5 + data.length);
  out[0] = 0x0d;
  out.writeUInt32BE(data.length, 1);
  out.set(data, 5);
  return out;
}

const NONE = Buffer.from([0x09]);

function some(inner: Buffer): Buffer {
  return Buffer.concat([Buffer.from([0x0a]), inner]);
}

/** `{hashbytes, version}` tuple (fields in sorted order, as serialized). */
function poxAddrTuple(addr: PoxAddress): Buffer {
  return Buffer.concat([
    Buffer.from([0x0c, 0, 0, 0, 2, 9]),
    Buffer.from('hashbytes', 'latin1'),
    bufferBytes(addr.hashbytes),
    Buffer.from([0x07]),
    Buffer.from('version', 'latin1'),
    bufferBytes(Uint8Array.of(addr.version)),
  ]);
}

// --- Reading events ----------------------------------------------------------------------------

function eventBody(e: EventJson): Record<string, unknown> {
  return (e[e.type] ?? {}) as Record<string, unknown>;
}

function str(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'bigint') return String(v);
  throw new Error(`Expected a string, got ${JSON.stringify(v)}`);
}

function tupleField(t: ClarityTree | undefined, name: string): ClarityTree | undefined {
  return t && t.type === 'tuple' ? t.value.get(name) : undefined;
}

function uintField(t: ClarityTree | undefined, name: string): bigint {
  const f = tupleField(t, name);
  if (!f || (f.type !== 'uint' && f.type !== 'int')) throw new Error(`Missing uint field ${name}`);
  return f.value;
}

/** The ok-tuple of a tx result (`(ok (tuple ...))`); throws on anything else, as upstream does. */
function okResult(rawResult: string): ClarityTree {
  const v = parseClarityValue(rawResult);
  if (v.type !== 'ok') throw new Error(`Unexpected tx result Clarity type: ${v.type}`);
  return v.value;
}

interface PoxPrintEvent {
  contractIdentifier: string;
  name: string;
  stacker: string;
  data: ClarityTree;
  /** Bitcoin-address round trip of the event's `pox-addr` (null when absent or not encodable). */
  poxAddr: PoxAddress | null;
}

/** A pox-2/3/4 print event `(ok (tuple (name ..) (stacker ..) (data (tuple ..)) ...))`; null for `(err ..)`. */
function decodePoxPrint(contractIdentifier: string, rawValue: string): PoxPrintEvent | null {
  const v = parseClarityValue(rawValue);
  if (v.type !== 'ok' || v.value.type !== 'tuple') return null;
  const name = tupleField(v.value, 'name');
  const stacker = tupleField(v.value, 'stacker');
  const data = tupleField(v.value, 'data');
  if (name?.type !== 'string-ascii' || stacker?.type !== 'principal' || data?.type !== 'tuple') return null;
  let poxAddr: PoxAddress | null = null;
  let addr = tupleField(data, 'pox-addr');
  if (addr?.type === 'some') addr = addr.value;
  if (addr?.type === 'tuple') {
    const version = tupleField(addr, 'version');
    const hashbytes = tupleField(addr, 'hashbytes');
    if (version?.type === 'buffer' && hashbytes?.type === 'buffer' && version.value.length > 0) {
      poxAddr = roundTripPoxAddress(version.value[0], hashbytes.value);
    }
  }
  return { contractIdentifier, name: name.value, stacker: stacker.value, data, poxAddr };
}

// --- Building the decoded tx -----------------------------------------------------------------------

function contractName(contractIdentifier: unknown): string {
  return typeof contractIdentifier === 'string' && contractIdentifier.includes('.')
    ? contractIdentifier.split('.')[1]
    : 'pox';
}

function baseTx(isMainnet: boolean, sender: string): Omit<DecodedTx, 'typeId' | 'txType' | 'payload'> {
  return {
    version: isMainnet ? 0x00 : 0x80,
    chainId: isMainnet ? 0x00000001 : 0x80000000,
    anchorMode: 'any',
    postConditionMode: 'allow',
    postConditions: [],
    postConditionsHex: '0x0100000000',
    nonce: 0,
    feeRate: '0',
    senderAddress: sender,
    sponsored: false,
    sponsorAddress: null,
    sponsorNonce: null,
    tokenTransferRecipient: null,
    tokenTransferAmount: null,
    contractCallContractId: null,
    contractCallFunctionName: null,
    contractCallFunctionArgsHex: null,
    smartContractContractId: null,
    byteLength: 1,
  };
}

function tokenTransfer(isMainnet: boolean, sender: string, recipient: string, amount: string): DecodedTx {
  const amountStr = BigInt(amount).toString();
  return {
    ...baseTx(isMainnet, sender),
    typeId: 0,
    txType: 'token_transfer',
    tokenTransferRecipient: recipient,
    tokenTransferAmount: amountStr,
    payload: { token_transfer: { recipient_address: recipient, amount: amountStr, memo: '0x' } },
  };
}

function contractCall(
  isMainnet: boolean,
  sender: string,
  contractId: string,
  functionName: string,
  args: Buffer[],
): DecodedTx {
  const count = Buffer.alloc(4);
  count.writeUInt32BE(args.length);
  const argsBuf = Buffer.concat([count, ...args]);
  const functionArgs: FunctionArgJson[] = decodeClarityValueList(argsBuf).map((a) => ({
    hex: a.hex,
    repr: a.repr,
    name: '',
    type: a.type,
  }));
  return {
    ...baseTx(isMainnet, sender),
    typeId: 2,
    txType: 'contract_call',
    contractCallContractId: contractId,
    contractCallFunctionName: functionName,
    contractCallFunctionArgsHex: '0x' + argsBuf.toString('hex'),
    payload: {
      contract_call: {
        contract_id: contractId,
        function_name: functionName,
        function_signature: '',
        function_args: functionArgs,
      },
    },
  };
}

/**
 * Decoded tx for a burnchain-op `/new_block` tx (`raw_tx == "0x00"`), rebuilt from the events
 * of that tx (other txs' events are ignored) and its `burnchain_op`:
 * - `stx_transfer_event` → token transfer (memo `0x`), sender = event sender;
 * - pox-4 `stack_stx` burn op with a signer key → `pox-4.stack-stx` with the op's 8 arguments;
 * - `stx_lock_event` → `stack-stx` on the lock event's pox contract (default `pox`) with amount,
 *   pox-addr (from the tx's pox `stack-stx` print event, else the stacker's address), start burn height
 *   (the block's `burn_block_height`) and lock period (from the result's unlock height; cycles of
 *   2100 blocks on mainnet, 50 elsewhere);
 * - pox `delegate-stx` print event → `delegate-stx` (pox-4 with a `delegate_stx` burn op: from the op);
 * - subnet deposits (nft/ft/stx mint events, register-asset ops).
 * Returns null when the tx has no events at all (upstream skips such txs); throws when nothing fits.
 */
export function decodeBurnchainOpTx(
  tx: BlockTxJson,
  events: EventJson[],
  isMainnet: boolean,
  burnBlockHeight: number,
): DecodedTx | null {
  const own = events.filter((e) => e.txid === tx.txid);
  if (own.length === 0) return null;
  const op: BurnchainOp = {
    tx,
    own,
    isMainnet,
    burnBlockHeight,
    bootAddress: isMainnet ? BOOT_ADDRESS_MAINNET : BOOT_ADDRESS_TESTNET,
    burnOp: (tx.burnchain_op ?? null) as Record<string, Record<string, unknown>> | null,
    find: (type: string) => own.find((e) => e.type === type),
  };
  // the first rule that fits, in this order (upstream's)
  const decoded =
    fromStxTransfer(op) ?? fromStackStxOp(op) ?? fromPoxEvents(op) ?? fromMint(op) ?? fromRegisterAsset(op);
  if (!decoded) throw new Error(`Unable to generate transaction from BTC tx ${tx.txid}`);
  return decoded;
}

/** What the rules of `decodeBurnchainOpTx` read. */
interface BurnchainOp {
  tx: BlockTxJson;
  /** the tx's own events */
  own: EventJson[];
  isMainnet: boolean;
  burnBlockHeight: number;
  bootAddress: string;
  burnOp: Record<string, Record<string, unknown>> | null;
  /** the tx's first event of a type */
  find(type: string): EventJson | undefined;
}

/** An `stx_transfer_event`: a token transfer. */
function fromStxTransfer({ find, isMainnet }: BurnchainOp): DecodedTx | null {
  const transfer = find('stx_transfer_event');
  if (!transfer) return null;
  const e = eventBody(transfer);
  return tokenTransfer(isMainnet, str(e.sender), str(e.recipient), str(e.amount));
}

/** A pox-4 `stack_stx` burn op with a signer key: `pox-4.stack-stx` with the op's 8 arguments. */
function fromStackStxOp({ tx, burnOp, isMainnet, bootAddress }: BurnchainOp): DecodedTx | null {
  const stackStxOp = burnOp?.stack_stx;
  if (!stackStxOp || !stackStxOp.signer_key) return null;
  okResult(tx.raw_result);
  const sender = str((stackStxOp.sender as Record<string, unknown>).address);
  const args = [
    uintBytes(str(stackStxOp.stacked_ustx)),
    poxAddrTuple(decodeBtcAddress(str(stackStxOp.reward_addr))),
    uintBytes(str(stackStxOp.burn_block_height)),
    uintBytes(str(stackStxOp.num_cycles)),
    NONE,
    bufferBytes(hexToBuffer(str(stackStxOp.signer_key))),
    uintBytes(str(stackStxOp.max_amount)),
    uintBytes(str(stackStxOp.auth_id)),
  ];
  return contractCall(isMainnet, sender, `${bootAddress}.pox-4`, 'stack-stx', args);
}

/** An `stx_lock_event` (`stack-stx`), else a pox `delegate-stx` print event (`delegate-stx`). */
function fromPoxEvents(op: BurnchainOp): DecodedTx | null {
  let poxEvent: PoxPrintEvent | null = null;
  for (const e of op.own) {
    if (e.type !== 'contract_event') continue;
    const body = eventBody(e);
    if (body.topic !== 'print' || !POX_PRINT_CONTRACTS.has(body.contract_identifier as string)) continue;
    poxEvent = decodePoxPrint(body.contract_identifier as string, str(body.raw_value));
    if (poxEvent) break;
  }
  const lock = op.find('stx_lock_event');
  if (lock) return fromStxLock(op, lock, poxEvent);
  if (poxEvent && poxEvent.name === 'delegate-stx') return fromDelegateStx(op, poxEvent);
  return null;
}

/**
 * `stack-stx` on the lock event's pox contract (default `pox`) with amount, pox-addr (from the tx's pox
 * `stack-stx` print event, else the stacker's address), start burn height (the block's) and lock period
 * (from the result's unlock height; cycles of 2100 blocks on mainnet, 50 elsewhere).
 */
function fromStxLock(
  { tx, isMainnet, bootAddress, burnBlockHeight }: BurnchainOp,
  lock: EventJson,
  poxEvent: PoxPrintEvent | null,
): DecodedTx {
  const e = eventBody(lock);
  const result = okResult(tx.raw_result);
  const lockAmount = uintField(result, 'lock-amount');
  const unlockBurnHeight = Number(uintField(result, 'unlock-burn-height'));
  const stacker = tupleField(result, 'stacker');
  const cycleLength = isMainnet ? 2100 : 50;
  const lockPeriod = Math.floor((unlockBurnHeight - burnBlockHeight) / cycleLength);
  let poxAddr = poxEvent?.name === 'stack-stx' ? poxEvent.poxAddr : null;
  if (!poxAddr) {
    if (stacker?.type !== 'principal') throw new Error('Missing stacker in stx lock tx result');
    const { version, hash160 } = parsePrincipal(stacker.value);
    poxAddr = poxAddressFromStacksAddress(version, hash160);
  }
  const args = [
    uintBytes(lockAmount),
    poxAddrTuple(poxAddr),
    uintBytes(burnBlockHeight),
    uintBytes(lockPeriod),
  ];
  const contractId = `${bootAddress}.${contractName(e.contract_identifier)}`;
  return contractCall(isMainnet, str(e.locked_address), contractId, 'stack-stx', args);
}

/** `delegate-stx`: from the `delegate_stx` burn op on pox-4, else from the print event. */
function fromDelegateStx(
  { tx, burnOp, isMainnet, bootAddress }: BurnchainOp,
  poxEvent: PoxPrintEvent,
): DecodedTx {
  okResult(tx.raw_result);
  const contractId = `${bootAddress}.${contractName(poxEvent.contractIdentifier)}`;
  const delegateOp = burnOp?.delegate_stx;
  if (contractId.endsWith('.pox-4') && delegateOp) {
    const rewardAddr = delegateOp.reward_addr as [number, string] | null | undefined;
    const until = delegateOp.until_burn_height;
    const args = [
      uintBytes(str(delegateOp.delegated_ustx)),
      principalBytes(str((delegateOp.delegate_to as Record<string, unknown>).address)),
      until === null || until === undefined ? NONE : some(uintBytes(str(until))),
      rewardAddr ? some(poxAddrTuple(decodeBtcAddress(rewardAddr[1]))) : NONE,
    ];
    const sender = str((delegateOp.sender as Record<string, unknown>).address);
    return contractCall(isMainnet, sender, contractId, 'delegate-stx', args);
  }
  const d = poxEvent.data;
  const until = tupleField(d, 'unlock-burn-height');
  const delegateTo = tupleField(d, 'delegate-to');
  if (delegateTo?.type !== 'principal') throw new Error('Missing delegate-to in delegate-stx event');
  const args = [
    uintBytes(uintField(d, 'amount-ustx')),
    principalBytes(delegateTo.value),
    until?.type === 'some' && until.value.type === 'uint' && until.value.value !== 0n
      ? some(uintBytes(until.value.value))
      : NONE,
    poxEvent.poxAddr ? some(poxAddrTuple(poxEvent.poxAddr)) : NONE,
  ];
  return contractCall(isMainnet, poxEvent.stacker, contractId, 'delegate-stx', args);
}

/** A subnet deposit: an nft, ft or stx mint event. */
function fromMint({ find, isMainnet, bootAddress }: BurnchainOp): DecodedTx | null {
  const nftMint = find('nft_mint_event');
  if (nftMint) {
    const e = eventBody(nftMint);
    const recipient = str(e.recipient);
    const contractId = str(e.asset_identifier).split('::')[0];
    const args = [hexToBuffer(str(e.raw_value)), principalBytes(recipient)];
    return contractCall(isMainnet, recipient, contractId, 'deposit-from-burnchain', args);
  }
  const ftMint = find('ft_mint_event');
  if (ftMint) {
    const e = eventBody(ftMint);
    const recipient = str(e.recipient);
    const contractId = str(e.asset_identifier).split('::')[0];
    const args = [uintBytes(str(e.amount)), principalBytes(recipient)];
    return contractCall(isMainnet, recipient, contractId, 'deposit-from-burnchain', args);
  }
  const stxMint = find('stx_mint_event');
  if (stxMint) {
    const e = eventBody(stxMint);
    return tokenTransfer(isMainnet, bootAddress, str(e.recipient), str(e.amount));
  }
  return null;
}

/** A subnet `register_asset` op (ft or nft) with the subnet contract's print event. */
function fromRegisterAsset({ own, burnOp, isMainnet }: BurnchainOp): DecodedTx | null {
  const registerAsset = burnOp?.register_asset;
  const subnetEvent = own.find((e) => {
    const body = eventBody(e);
    return (
      e.type === 'contract_event' &&
      body.topic === 'print' &&
      SUBNET_CONTRACTS.has(str(body.contract_identifier))
    );
  });
  if (
    !registerAsset ||
    !subnetEvent ||
    (registerAsset.asset_type !== 'ft' && registerAsset.asset_type !== 'nft')
  ) {
    return null;
  }
  const body = eventBody(subnetEvent);
  const contractId = str(body.contract_identifier).split('::')[0];
  const burnTxid = tupleField(parseClarityValue(str(body.raw_value)), 'burnchain-txid');
  if (burnTxid?.type !== 'buffer') throw new Error('Missing burnchain-txid in subnet event');
  const args = [
    asciiBytes(str(registerAsset.asset_type)),
    principalBytes(str(registerAsset.l1_contract_id)),
    principalBytes(str(registerAsset.l2_contract_id)),
    bufferBytes(burnTxid.value),
  ];
  return contractCall(isMainnet, contractId.split('.')[0], contractId, 'register-asset-contract', args);
}
