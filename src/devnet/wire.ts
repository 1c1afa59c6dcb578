// Consensus encoding of the transactions and Clarity values the chain generator emits (SIP-005 wire format,
// mainnet, single-sig P2PKH spending conditions). It writes the bytes @stacks/transactions would write for
// the same inputs (test/ingest/generator.test.ts checks them against the library's builders byte for byte);
// doing it directly keeps the per-transaction cost to a few buffer writes, so signing is the only real cost.

const TX_VERSION_MAINNET = 0x00;
const CHAIN_ID_MAINNET = 0x00000001;
export const AUTH_STANDARD = 0x04;
export const AUTH_SPONSORED = 0x05;

/** Byte offsets of the fields the signer fills in (single-sig spending conditions). */
export const Offsets = {
  authType: 5,
  originSigner: 7,
  originNonce: 27,
  originFee: 35,
  originSignature: 44,
  sponsorSigner: 110,
  sponsorNonce: 130,
  sponsorFee: 138,
  sponsorSignature: 147,
} as const;

const SPENDING_CONDITION_LENGTH = 1 + 20 + 8 + 8 + 1 + 65;

export enum AnchorMode {
  OnChainOnly = 1,
  OffChainOnly = 2,
  Any = 3,
}

export enum PostConditionMode {
  Allow = 1,
  Deny = 2,
}

// ---- Clarity values (consensus serialization) -----------------------------------------------------------

/** An already-serialized Clarity value. */
export type CV = Buffer;

export function uintCV(value: bigint | number): CV {
  const out = Buffer.allocUnsafe(17);
  out[0] = 0x01;
  const v = BigInt(value);
  out.writeBigUInt64BE(v >> 64n, 1);
  out.writeBigUInt64BE(v & 0xffffffffffffffffn, 9);
  return out;
}

export const trueCV: CV = Buffer.from([0x03]);
export const noneCV: CV = Buffer.from([0x09]);

export function someCV(value: CV): CV {
  return Buffer.concat([Buffer.from([0x0a]), value]);
}

export function okCV(value: CV): CV {
  return Buffer.concat([Buffer.from([0x07]), value]);
}

export function errCV(value: CV): CV {
  return Buffer.concat([Buffer.from([0x08]), value]);
}

export function standardPrincipalCV(version: number, hash160: Uint8Array): CV {
  const out = Buffer.allocUnsafe(22);
  out[0] = 0x05;
  out[1] = version;
  out.set(hash160, 2);
  return out;
}

export function contractPrincipalCV(version: number, hash160: Uint8Array, name: string): CV {
  const nameBytes = Buffer.from(name, 'ascii');
  const out = Buffer.allocUnsafe(23 + nameBytes.length);
  out[0] = 0x06;
  out[1] = version;
  out.set(hash160, 2);
  out[22] = nameBytes.length;
  out.set(nameBytes, 23);
  return out;
}

function lengthPrefixed(type: number, bytes: Uint8Array): CV {
  const out = Buffer.allocUnsafe(5 + bytes.length);
  out[0] = type;
  out.writeUInt32BE(bytes.length, 1);
  out.set(bytes, 5);
  return out;
}

export function bufferCV(bytes: Uint8Array): CV {
  return lengthPrefixed(0x02, bytes);
}

export function stringAsciiCV(text: string): CV {
  return lengthPrefixed(0x0d, Buffer.from(text, 'ascii'));
}

/** A tuple; Clarity serializes its entries sorted by name. */
export function tupleCV(entries: Record<string, CV>): CV {
  const names = Object.keys(entries).sort();
  const parts: Buffer[] = [Buffer.alloc(5)];
  parts[0][0] = 0x0c;
  parts[0].writeUInt32BE(names.length, 1);
  for (const name of names) {
    parts.push(Buffer.from([name.length]), Buffer.from(name, 'ascii'), entries[name]);
  }
  return Buffer.concat(parts);
}

export function cvHex(cv: CV): string {
  return '0x' + cv.toString('hex');
}

// ---- Post conditions -------------------------------------------------------------------------------------

export interface AssetInfo {
  version: number;
  hash160: Uint8Array;
  contractName: string;
  assetName: string;
}

function assetInfoBytes(asset: AssetInfo): Buffer {
  const contract = Buffer.from(asset.contractName, 'ascii');
  const name = Buffer.from(asset.assetName, 'ascii');
  return Buffer.concat([
    Buffer.from([asset.version]),
    asset.hash160,
    Buffer.from([contract.length]),
    contract,
    Buffer.from([name.length]),
    name,
  ]);
}

function standardPrincipalPC(version: number, hash160: Uint8Array): Buffer {
  return Buffer.concat([Buffer.from([0x02, version]), hash160]);
}

/** "<principal> will send exactly <amount> of <asset>" (fungible, code 0x01 = sent-equal-to). */
export function ftSentEqualPostCondition(
  principal: { version: number; hash160: Uint8Array },
  asset: AssetInfo,
  amount: bigint,
): Buffer {
  const amountBytes = Buffer.allocUnsafe(8);
  amountBytes.writeBigUInt64BE(amount);
  return Buffer.concat([
    Buffer.from([0x01]),
    standardPrincipalPC(principal.version, principal.hash160),
    assetInfoBytes(asset),
    Buffer.from([0x01]),
    amountBytes,
  ]);
}

/** "<principal> will send <asset> <value>" (non-fungible, code 0x10 = sent). */
export function nftSentPostCondition(
  principal: { version: number; hash160: Uint8Array },
  asset: AssetInfo,
  value: CV,
): Buffer {
  return Buffer.concat([
    Buffer.from([0x02]),
    standardPrincipalPC(principal.version, principal.hash160),
    assetInfoBytes(asset),
    value,
    Buffer.from([0x10]),
  ]);
}

// ---- Payloads ---------------------------------------------------------------------------------------------

export function tokenTransferPayload(recipient: CV, amount: bigint, memo: Uint8Array): Buffer {
  const out = Buffer.alloc(1 + recipient.length + 8 + 34);
  out[0] = 0x00;
  recipient.copy(out, 1);
  out.writeBigUInt64BE(amount, 1 + recipient.length);
  out.set(memo.subarray(0, 34), 1 + recipient.length + 8);
  return out;
}

export function contractCallPayload(
  contract: { version: number; hash160: Uint8Array; name: string },
  functionName: string,
  args: CV[],
): Buffer {
  const name = Buffer.from(contract.name, 'ascii');
  const fn = Buffer.from(functionName, 'ascii');
  const head = Buffer.allocUnsafe(1 + 1 + 20 + 1 + name.length + 1 + fn.length + 4);
  let p = 0;
  head[p++] = 0x02;
  head[p++] = contract.version;
  head.set(contract.hash160, p);
  p += 20;
  head[p++] = name.length;
  head.set(name, p);
  p += name.length;
  head[p++] = fn.length;
  head.set(fn, p);
  p += fn.length;
  head.writeUInt32BE(args.length, p);
  return Buffer.concat([head, ...args]);
}

/** A versioned smart contract (payload type 6) in the given Clarity version. */
export function smartContractPayload(name: string, code: string, clarityVersion: number): Buffer {
  const nameBytes = Buffer.from(name, 'ascii');
  const codeBytes = Buffer.from(code, 'utf8');
  const head = Buffer.allocUnsafe(3 + nameBytes.length + 4);
  head[0] = 0x06;
  head[1] = clarityVersion;
  head[2] = nameBytes.length;
  head.set(nameBytes, 3);
  head.writeUInt32BE(codeBytes.length, 3 + nameBytes.length);
  return Buffer.concat([head, codeBytes]);
}

export function coinbasePayload(data: Uint8Array): Buffer {
  return Buffer.concat([Buffer.from([0x04]), data.subarray(0, 32)]);
}

/** A Nakamoto coinbase (payload type 8): 32 bytes of data, an optional recipient, the 80-byte VRF proof. */
export function nakamotoCoinbasePayload(
  data: Uint8Array,
  altRecipient: CV | null,
  vrfProof: Uint8Array,
): Buffer {
  return Buffer.concat([
    Buffer.from([0x08]),
    data.subarray(0, 32),
    altRecipient ? someCV(altRecipient) : noneCV,
    vrfProof,
  ]);
}

/** Why a tenure changes (the node's `TenureChangeCause`). */
export enum TenureChangeCause {
  BlockFound = 0,
  Extended = 1,
}

export interface TenureChange {
  /** consensus hash of the sortition that elected the tenure's miner (20 bytes) */
  tenureConsensusHash: Uint8Array;
  prevTenureConsensusHash: Uint8Array;
  /** consensus hash of the burn block the miner saw last */
  burnViewConsensusHash: Uint8Array;
  /** index block hash of the block before this tenure change (32 bytes) */
  previousTenureEnd: Uint8Array;
  previousTenureBlocks: number;
  cause: TenureChangeCause;
  /** hash160 of the miner's public key */
  pubkeyHash: Uint8Array;
}

/** A tenure change (payload type 7). */
export function tenureChangePayload(change: TenureChange): Buffer {
  const blocks = Buffer.allocUnsafe(4);
  blocks.writeUInt32BE(change.previousTenureBlocks);
  return Buffer.concat([
    Buffer.from([0x07]),
    change.tenureConsensusHash,
    change.prevTenureConsensusHash,
    change.burnViewConsensusHash,
    change.previousTenureEnd,
    blocks,
    Buffer.from([change.cause]),
    change.pubkeyHash,
  ]);
}

// ---- Transactions -------------------------------------------------------------------------------------------

export interface UnsignedTxInput {
  /** hash160 of the origin's compressed public key */
  originSigner: Uint8Array;
  sponsored: boolean;
  anchorMode: AnchorMode;
  postConditionMode: PostConditionMode;
  postConditions: Buffer[];
  payload: Buffer;
}

/**
 * The transaction with its authorization cleared the way the sighash algorithm wants it (nonce, fee and
 * signature zero; a sponsor condition entirely zero): the bytes whose hash starts the signing chain. The
 * signer then writes nonces, fees, the sponsor's hash160 and the signatures at `Offsets`.
 */
export function encodeClearedTx(input: UnsignedTxInput): Buffer {
  const authLength = 1 + SPENDING_CONDITION_LENGTH * (input.sponsored ? 2 : 1);
  const head = Buffer.alloc(5 + authLength + 2 + 4);
  head[0] = TX_VERSION_MAINNET;
  head.writeUInt32BE(CHAIN_ID_MAINNET, 1);
  head[Offsets.authType] = input.sponsored ? AUTH_SPONSORED : AUTH_STANDARD;
  head[6] = 0x00; // P2PKH
  head.set(input.originSigner, Offsets.originSigner);
  // key encoding 0x00 (compressed) and zero signatures are already there
  let p = 5 + authLength;
  head[p++] = input.anchorMode;
  head[p++] = input.postConditionMode;
  head.writeUInt32BE(input.postConditions.length, p);
  return Buffer.concat([head, ...input.postConditions, input.payload]);
}
