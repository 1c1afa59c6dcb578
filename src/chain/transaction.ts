// Stacks transaction decoder: consensus bytes to the field values of the original API's tx objects.
// A direct reader over the wire format (SIP-005 and later payloads); it keeps the raw bytes the API
// shows (34-byte memos, argument hex) and avoids building intermediate objects.
import { hash } from 'node:crypto';
import { addressVersionForHashMode } from './address.js';
import { ByteReader, hexToBuffer } from './bytes.js';
import { c32Address } from './c32.js';
import { readClarityValue } from './clarity.js';

type TxTypeName =
  'token_transfer' | 'smart_contract' | 'contract_call' | 'poison_microblock' | 'coinbase' | 'tenure_change';

type AnchorModeName = 'on_chain_only' | 'off_chain_only' | 'any';
type PostConditionModeName = 'allow' | 'deny' | 'originator';

type PostConditionPrincipalJson =
  | { type_id: 'principal_origin' }
  | { type_id: 'principal_standard'; address: string }
  | { type_id: 'principal_contract'; address: string; contract_name: string };

interface PostConditionAssetJson {
  asset_name: string;
  contract_address: string;
  contract_name: string;
}

/** A post condition as the API renders it (key order as upstream). */
interface PostConditionJson {
  principal: PostConditionPrincipalJson;
  condition_code: string;
  amount?: string;
  type: 'stx' | 'fungible' | 'non_fungible' | 'staking' | 'pox';
  asset_value?: { hex: string; repr: string };
  asset?: PostConditionAssetJson;
}

export interface FunctionArgJson {
  hex: string;
  repr: string;
  name: string;
  type: string;
}

export interface DecodedTx {
  /** 0 token_transfer, 1 smart_contract, 2 contract_call, 3 poison_microblock, 4 coinbase,
   *  5 coinbase pay-to-alt, 6 versioned smart contract, 7 tenure_change, 8 nakamoto coinbase */
  typeId: number;
  txType: TxTypeName;
  /** Transaction version byte: 0x00 mainnet, 0x80 testnet. */
  version: number;
  chainId: number;
  anchorMode: AnchorModeName;
  postConditionMode: PostConditionModeName;
  postConditions: PostConditionJson[];
  /** Mode byte + u32 count + post conditions, as upstream stores them (`0x0100000000` for burnchain-op txs). */
  postConditionsHex: string;
  nonce: number;
  feeRate: string;
  senderAddress: string;
  sponsored: boolean;
  sponsorAddress: string | null;
  sponsorNonce: number | null;
  /** The API's type-specific member, e.g. `{ token_transfer: {...} }` or `{ coinbase_payload: {...} }`. */
  payload: Record<string, unknown>;
  tokenTransferRecipient: string | null;
  tokenTransferAmount: string | null;
  contractCallContractId: string | null;
  contractCallFunctionName: string | null;
  /** u32 count + serialized arguments (upstream's `contract_call_function_args`), contract calls only. */
  contractCallFunctionArgsHex: string | null;
  smartContractContractId: string | null;
  byteLength: number;
}

const ANCHOR_MODES: Record<number, AnchorModeName> = { 1: 'on_chain_only', 2: 'off_chain_only', 3: 'any' };
const POST_CONDITION_MODES: Record<number, PostConditionModeName> = {
  1: 'allow',
  2: 'deny',
  3: 'originator',
};
const FUNGIBLE_CODES: Record<number, string> = {
  1: 'sent_equal_to',
  2: 'sent_greater_than',
  3: 'sent_greater_than_or_equal_to',
  4: 'sent_less_than',
  5: 'sent_less_than_or_equal_to',
};
const NON_FUNGIBLE_CODES: Record<number, string> = { 0x10: 'sent', 0x11: 'not_sent', 0x12: 'maybe_sent' };
const POX_CODES: Record<number, string> = {
  0x30: 'not_performed',
  0x31: 'maybe_performed',
  0x32: 'performed',
};
const TENURE_CHANGE_CAUSES: Record<number, string> = {
  0: 'block_found',
  1: 'extended',
  2: 'extended_runtime',
  3: 'extended_read_count',
  4: 'extended_read_length',
  5: 'extended_write_count',
  6: 'extended_write_length',
};

function lookup(table: Record<number, string>, code: number, what: string): string {
  const name = table[code];
  if (name === undefined) throw new Error(`Invalid ${what} ${code}`);
  return name;
}

class TxReader extends ByteReader {
  /** version byte + 20-byte hash160 → address string */
  address(): string {
    const version = this.u8();
    const p = this.take(20);
    return c32Address(version, this.buf.subarray(p, p + 20));
  }

  /** A Clarity principal value (type prefix 0x05 standard / 0x06 contract) → principal string. */
  clarityPrincipal(): string {
    const prefix = this.u8();
    if (prefix === 0x05) return this.address();
    if (prefix === 0x06) {
      const address = this.address();
      return address + '.' + this.shortString();
    }
    throw new Error(`Expected a principal value, got type prefix ${prefix}`);
  }

  /** A spending condition; returns the signer's hash mode, hash, nonce and fee. */
  spendingCondition(): { hashMode: number; signer: Buffer; nonce: number; fee: string } {
    const hashMode = this.u8();
    const signer = this.bytes(20);
    const nonce = this.u64Number();
    const fee = this.u64String();
    if (hashMode === 0x00 || hashMode === 0x02) {
      const keyEncoding = this.u8();
      if (keyEncoding > 1) throw new Error(`Invalid public key encoding ${keyEncoding}`);
      this.take(65); // signature
    } else if (hashMode === 0x01 || hashMode === 0x03 || hashMode === 0x05 || hashMode === 0x07) {
      const fields = this.u32();
      for (let i = 0; i < fields; i++) {
        const fieldType = this.u8();
        if (fieldType === 0x00 || fieldType === 0x01) this.take(33);
        else if (fieldType === 0x02 || fieldType === 0x03) this.take(65);
        else throw new Error(`Invalid auth field type ${fieldType}`);
      }
      this.u16(); // signatures required
    } else {
      throw new Error(`Invalid spending condition hash mode ${hashMode}`);
    }
    return { hashMode, signer, nonce, fee };
  }

  postConditionPrincipal(): PostConditionPrincipalJson {
    const typeId = this.u8();
    if (typeId === 0x01) return { type_id: 'principal_origin' };
    if (typeId === 0x02) return { type_id: 'principal_standard', address: this.address() };
    if (typeId === 0x03) {
      const address = this.address();
      return { type_id: 'principal_contract', address, contract_name: this.shortString() };
    }
    throw new Error(`Invalid post condition principal type ${typeId}`);
  }

  asset(): PostConditionAssetJson {
    const contractAddress = this.address();
    const contractName = this.shortString();
    const assetName = this.shortString();
    return { asset_name: assetName, contract_address: contractAddress, contract_name: contractName };
  }

  postCondition(): PostConditionJson {
    const assetType = this.u8();
    const principal = this.postConditionPrincipal();
    switch (assetType) {
      case 0x00: {
        const code = lookup(FUNGIBLE_CODES, this.u8(), 'fungible condition code');
        return { principal, condition_code: code, amount: this.u64String(), type: 'stx' };
      }
      case 0x01: {
        const asset = this.asset();
        const code = lookup(FUNGIBLE_CODES, this.u8(), 'fungible condition code');
        return { principal, condition_code: code, amount: this.u64String(), type: 'fungible', asset };
      }
      case 0x02: {
        const asset = this.asset();
        const start = this.pos;
        const { repr, end } = readClarityValue(this.buf, start, false);
        this.pos = end;
        const code = lookup(NON_FUNGIBLE_CODES, this.u8(), 'non-fungible condition code');
        return {
          principal,
          condition_code: code,
          type: 'non_fungible',
          asset_value: { hex: '0x' + this.buf.toString('hex', start, end), repr },
          asset,
        };
      }
      case 0x03: {
        const code = lookup(FUNGIBLE_CODES, this.u8(), 'fungible condition code');
        return { principal, condition_code: code, amount: this.u64String(), type: 'staking' };
      }
      case 0x04: {
        const code = lookup(POX_CODES, this.u8(), 'pox condition code');
        return { principal, condition_code: code, type: 'pox' };
      }
      default:
        throw new Error(`Invalid post condition asset type ${assetType}`);
    }
  }

  microblockHeader(): string {
    return this.hex(1 + 2 + 32 + 32 + 65);
  }
}

/**
 * The tx id of a raw transaction: `0x` + hex of SHA-512/256 over its bytes. Ingest checks every tx of every
 * block against it, so it is OpenSSL's (node:crypto): 2.3-3.6 µs per tx of 210 bytes (the demo chain's,
 * hex decoding included), 8.7-15 µs with @noble/hashes' JavaScript: at 10k txs/s, 3% of a core instead of 10%.
 * The one-shot `hash`, not a `createHash` object: 1.3-1.8 µs against 2.2-3.8 per tx of 150-450 bytes (20,000
 * random ones, three rounds on the loaded 2-core machine).
 */
export function txIdFromRaw(rawTx: string | Buffer): string {
  const buf = typeof rawTx === 'string' ? hexToBuffer(rawTx) : rawTx;
  return '0x' + hash('sha512-256', buf, 'hex');
}

/** Decodes a raw transaction (`0x`-hex or bytes) into the API's field values. */
export function decodeTransaction(rawTx: string | Buffer): DecodedTx {
  const buf = typeof rawTx === 'string' ? hexToBuffer(rawTx) : rawTx;
  const r = new TxReader(buf);
  const version = r.u8();
  const mainnet = (version & 0x80) === 0;
  const chainId = r.u32();

  const authType = r.u8();
  if (authType !== 0x04 && authType !== 0x05) throw new Error(`Invalid auth type ${authType}`);
  const origin = r.spendingCondition();
  const sponsor = authType === 0x05 ? r.spendingCondition() : null;
  const senderAddress = c32Address(addressVersionForHashMode(origin.hashMode, mainnet), origin.signer);
  const sponsorAddress = sponsor
    ? c32Address(addressVersionForHashMode(sponsor.hashMode, mainnet), sponsor.signer)
    : null;

  const anchorModeByte = r.u8();
  const anchorMode = ANCHOR_MODES[anchorModeByte];
  if (anchorMode === undefined) throw new Error(`Invalid anchor mode ${anchorModeByte}`);

  const pcStart = r.pos;
  const pcModeByte = r.u8();
  const postConditionMode = POST_CONDITION_MODES[pcModeByte];
  if (postConditionMode === undefined) throw new Error(`Invalid post condition mode ${pcModeByte}`);
  const pcCount = r.u32();
  const postConditions: PostConditionJson[] = [];
  for (let i = 0; i < pcCount; i++) postConditions.push(r.postCondition());
  const postConditionsHex = '0x' + buf.toString('hex', pcStart, r.pos);

  const typeId = r.u8();
  const p = readPayload(r, typeId, senderAddress);
  return {
    typeId,
    txType: p.txType,
    version,
    chainId,
    anchorMode,
    postConditionMode,
    postConditions,
    postConditionsHex,
    nonce: origin.nonce,
    feeRate: sponsor ? sponsor.fee : origin.fee,
    senderAddress,
    sponsored: sponsor !== null,
    sponsorAddress,
    sponsorNonce: sponsor ? sponsor.nonce : null,
    payload: p.payload,
    tokenTransferRecipient: p.tokenTransferRecipient,
    tokenTransferAmount: p.tokenTransferAmount,
    contractCallContractId: p.contractCallContractId,
    contractCallFunctionName: p.contractCallFunctionName,
    contractCallFunctionArgsHex: p.contractCallFunctionArgsHex,
    smartContractContractId: p.smartContractContractId,
    byteLength: buf.length,
  };
}

/** The members of `DecodedTx` that its payload decides. */
type PayloadFields = Pick<
  DecodedTx,
  | 'txType'
  | 'payload'
  | 'tokenTransferRecipient'
  | 'tokenTransferAmount'
  | 'contractCallContractId'
  | 'contractCallFunctionName'
  | 'contractCallFunctionArgsHex'
  | 'smartContractContractId'
>;

/** A payload's fields, the type-specific ones null (each reader sets its own). */
function payloadFields(txType: TxTypeName, payload: Record<string, unknown>): PayloadFields {
  return {
    txType,
    payload,
    tokenTransferRecipient: null,
    tokenTransferAmount: null,
    contractCallContractId: null,
    contractCallFunctionName: null,
    contractCallFunctionArgsHex: null,
    smartContractContractId: null,
  };
}

/** Reads the payload of type `typeId` (the byte before it). */
function readPayload(r: TxReader, typeId: number, senderAddress: string): PayloadFields {
  switch (typeId) {
    case 0x00: {
      const recipient = r.clarityPrincipal();
      const amount = r.u64String();
      const memo = r.hex(34);
      const fields = payloadFields('token_transfer', {
        token_transfer: { recipient_address: recipient, amount, memo },
      });
      fields.tokenTransferRecipient = recipient;
      fields.tokenTransferAmount = amount;
      return fields;
    }
    case 0x01:
    case 0x06: {
      const clarityVersion = typeId === 0x06 ? r.u8() : null;
      const name = r.shortString();
      const codeLen = r.u32();
      const p = r.take(codeLen);
      const contractId = senderAddress + '.' + name;
      const fields = payloadFields('smart_contract', {
        smart_contract: {
          clarity_version: clarityVersion,
          contract_id: contractId,
          source_code: r.buf.toString('utf8', p, p + codeLen),
        },
      });
      fields.smartContractContractId = contractId;
      return fields;
    }
    case 0x02:
      return readContractCall(r);
    case 0x03: {
      const h1 = r.microblockHeader();
      const h2 = r.microblockHeader();
      return payloadFields('poison_microblock', {
        poison_microblock: { microblock_header_1: h1, microblock_header_2: h2 },
      });
    }
    case 0x04:
    case 0x05:
    case 0x08:
      return payloadFields('coinbase', { coinbase_payload: readCoinbase(r, typeId) });
    case 0x07:
      return payloadFields('tenure_change', { tenure_change_payload: readTenureChange(r) });
    default:
      throw new Error(`Invalid transaction payload type ${typeId}`);
  }
}

function readContractCall(r: TxReader): PayloadFields {
  const buf = r.buf;
  const address = r.address();
  const contractId = address + '.' + r.shortString();
  const functionName = r.shortString();
  const argsStart = r.pos;
  const argCount = r.u32();
  const args: FunctionArgJson[] = [];
  let pos = r.pos;
  for (let i = 0; i < argCount; i++) {
    const { repr, type, end } = readClarityValue(buf, pos);
    args.push({ hex: '0x' + buf.toString('hex', pos, end), repr, name: '', type });
    pos = end;
  }
  r.pos = pos;
  const fields = payloadFields('contract_call', {
    contract_call: {
      contract_id: contractId,
      function_name: functionName,
      function_signature: '',
      function_args: args,
    },
  });
  fields.contractCallContractId = contractId;
  fields.contractCallFunctionName = functionName;
  fields.contractCallFunctionArgsHex = '0x' + buf.toString('hex', argsStart, pos);
  return fields;
}

/** A coinbase (0x04), one paying an alternate recipient (0x05), or a Nakamoto coinbase (0x08). */
function readCoinbase(r: TxReader, typeId: number): Record<string, unknown> {
  const data = r.hex(32);
  if (typeId === 0x04) return { data, alt_recipient: null };
  if (typeId === 0x05) return { data, alt_recipient: r.clarityPrincipal() };
  const opt = r.u8();
  let altRecipient: string | null = null;
  if (opt === 0x0a) altRecipient = r.clarityPrincipal();
  else if (opt !== 0x09) throw new Error(`Invalid coinbase recipient option prefix ${opt}`);
  const vrfProof = r.hex(80);
  return { data, alt_recipient: altRecipient, vrf_proof: vrfProof };
}

function readTenureChange(r: TxReader): Record<string, unknown> {
  const tenureConsensusHash = r.hex(20);
  const prevTenureConsensusHash = r.hex(20);
  const burnViewConsensusHash = r.hex(20);
  const previousTenureEnd = r.hex(32);
  const previousTenureBlocks = r.u32();
  const cause = lookup(TENURE_CHANGE_CAUSES, r.u8(), 'tenure change cause');
  const pubkeyHash = r.hex(20);
  return {
    tenure_consensus_hash: tenureConsensusHash,
    prev_tenure_consensus_hash: prevTenureConsensusHash,
    burn_view_consensus_hash: burnViewConsensusHash,
    previous_tenure_end: previousTenureEnd,
    previous_tenure_blocks: previousTenureBlocks,
    cause,
    pubkey_hash: pubkeyHash,
  };
}
