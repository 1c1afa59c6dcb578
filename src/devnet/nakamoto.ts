import * as secp from '@noble/secp256k1';
import { c32ToB58 } from 'c32check';
import { POX_CYCLE_LENGTH, POX_FIRST_BURN_HEIGHT, POX_PREPARE_LENGTH, poxRewardCycle } from './contracts.js';
import { MAINNET_P2PKH, derivePrivateKey, hash160 } from './keys.js';
import { c32Address } from '../chain/c32.js';
import { sha512_256, signHash } from './signer.js';

// Epoch 3.0 (Nakamoto) blocks as stacks-core builds, hashes and signs them: the header fields the block
// hash commits to, the miner's signature over them, and the signer set's signatures over the block hash.
// Only the state root (the MARF trie) is not computed: it is derived from the seed.

/** Share of the signers' weight a block needs (the node's 70% threshold). */
const SIGNING_THRESHOLD = 0.7;
const NAKAMOTO_BLOCK_VERSION = 0;

/** A `BitVec` as the node serializes it: u16 bit count, u32 byte count, bits (least significant first). */
function bitvec(ones: boolean[]): Buffer {
  const bytes = Buffer.alloc(Math.ceil(ones.length / 8));
  ones.forEach((one, i) => {
    if (one) bytes[i >> 3] |= 1 << (i & 7);
  });
  const head = Buffer.allocUnsafe(6);
  head.writeUInt16BE(ones.length, 0);
  head.writeUInt32BE(bytes.length, 2);
  return Buffer.concat([head, bytes]);
}

/** Root of the block's tagged SHA-512/256 Merkle tree of tx ids (leaf `H(0x00 | txid)`, node `H(0x01 | l | r)`). */
function txMerkleRoot(txids: Buffer[]): Buffer {
  if (txids.length === 0) return Buffer.alloc(32);
  let level = txids.map((txid) => sha512_256(Buffer.from([0x00]), txid));
  if (level.length % 2 === 1) level.push(level[level.length - 1]);
  while (level.length > 1) {
    const next: Buffer[] = [];
    for (let i = 0; i < level.length; i += 2) {
      next.push(sha512_256(Buffer.from([0x01]), level[i], level[i + 1] ?? level[i]));
    }
    level = next;
  }
  return level[0];
}

interface NakamotoHeader {
  chainLength: number;
  burnSpent: number;
  consensusHash: Buffer;
  parentBlockId: Buffer;
  txMerkleRoot: Buffer;
  stateIndexRoot: Buffer;
  timestamp: number;
  poxTreatment: Buffer;
}

function u64(value: number): Buffer {
  const out = Buffer.allocUnsafe(8);
  out.writeBigUInt64BE(BigInt(value));
  return out;
}

function headerFields(header: NakamotoHeader): Buffer[] {
  return [
    Buffer.from([NAKAMOTO_BLOCK_VERSION]),
    u64(header.chainLength),
    u64(header.burnSpent),
    header.consensusHash,
    header.parentBlockId,
    header.txMerkleRoot,
    header.stateIndexRoot,
    u64(header.timestamp),
  ];
}

/** What the miner signs: every header field but the signatures. */
function minerSignatureHash(header: NakamotoHeader): Buffer {
  return sha512_256(...headerFields(header), header.poxTreatment);
}

/** What the signers sign, and the block hash: the header with the miner's signature, without theirs. */
function signerSignatureHash(header: NakamotoHeader, minerSignature: Buffer): Buffer {
  return sha512_256(...headerFields(header), minerSignature, header.poxTreatment);
}

export interface SealedBlock {
  blockHash: Buffer;
  indexBlockHash: Buffer;
  minerSignature: Buffer;
  /** the signer bitvec as serialized (length-prefixed): one bit per reward slot, set when it is rewarded */
  poxTreatment: Buffer;
  signerSignatures: Buffer[];
}

/**
 * Builds a Nakamoto block's header over its tx ids, has the miner sign it and the signers (but those
 * `absent`) sign its hash: the block hash, the index block hash (that hash with the consensus hash) and the
 * signatures, as a `/new_block` message carries them.
 */
export function sealNakamotoBlock(
  fields: Omit<NakamotoHeader, 'txMerkleRoot' | 'poxTreatment'> & { txids: Buffer[] },
  minerKey: Uint8Array,
  signers: SignerSet,
  absent: (signerIndex: number) => boolean,
): SealedBlock {
  const { txids, ...rest } = fields;
  // every reward slot rewarded (no PoX address punished)
  const poxTreatment = bitvec(signers.rewardedAddresses.map(() => true));
  const header: NakamotoHeader = { ...rest, txMerkleRoot: txMerkleRoot(txids), poxTreatment };
  const minerSignature = signHash(minerSignatureHash(header), minerKey);
  const blockHash = signerSignatureHash(header, minerSignature);
  return {
    blockHash,
    indexBlockHash: sha512_256(blockHash, header.consensusHash),
    minerSignature,
    poxTreatment,
    signerSignatures: signers.sign(blockHash, absent),
  };
}

interface Signer {
  privateKey: Buffer;
  /** compressed public key, the reward set's `signing_key` */
  publicKey: Buffer;
  weight: number;
  stackedUstx: bigint;
  /** the Bitcoin address its PoX rewards go to */
  rewardAddress: string;
}

/**
 * The stackers' signers, as a reward set lists them: sorted by signing key, each with its weight (reward
 * slots) and the reward address it stacked for, repeated once per slot in `rewardedAddresses`.
 */
export class SignerSet {
  readonly signers: Signer[];
  readonly rewardedAddresses: string[];
  readonly thresholdUstx: bigint;
  private readonly totalWeight: number;

  constructor(seed: string, weights: number[]) {
    this.thresholdUstx = 80_000_000_000n; // 80,000 STX per reward slot
    this.signers = weights
      .map((weight, i) => {
        const privateKey = derivePrivateKey(seed, `signer:${i}`);
        const publicKey = Buffer.from(secp.getPublicKey(privateKey, true));
        return {
          privateKey,
          publicKey,
          weight,
          stackedUstx: this.thresholdUstx * BigInt(weight) + BigInt(i) * 1_234_567n,
          rewardAddress: c32ToB58(c32Address(MAINNET_P2PKH, hash160(publicKey))),
        };
      })
      .sort((a, b) => Buffer.compare(a.publicKey, b.publicKey));
    this.rewardedAddresses = this.signers.flatMap((s) => new Array<string>(s.weight).fill(s.rewardAddress));
    this.totalWeight = weights.reduce((a, b) => a + b, 0);
  }

  /**
   * Signatures over `blockHash` in signer-set order, from every signer but those `absent` (as long as the
   * rest still holds the threshold: then the absent ones sign anyway).
   */
  sign(blockHash: Buffer, absent: (index: number) => boolean): Buffer[] {
    let present = this.signers.map((_, i) => !absent(i));
    const weight = this.signers.reduce((sum, s, i) => sum + (present[i] ? s.weight : 0), 0);
    if (weight < this.totalWeight * SIGNING_THRESHOLD) present = present.map(() => true);
    return this.signers.filter((_, i) => present[i]).map((s) => signHash(blockHash, s.privateKey));
  }

  /** The `reward_set` member of a `/new_block` message (keys in the node's order). */
  rewardSetJson() {
    return {
      pox_ustx_threshold: this.thresholdUstx.toString(),
      rewarded_addresses: this.rewardedAddresses,
      signers: this.signers.map((s) => ({
        signing_key: s.publicKey.toString('hex'),
        stacked_amt: s.stackedUstx.toString(),
        weight: s.weight,
      })),
      start_cycle_state: { missed_reward_slots: [] },
    };
  }
}

/**
 * The reward cycle whose reward set is computed in the prepare phase holding `burnHeight`, or null outside
 * a prepare phase. A cycle's first block is `first + cycle * length + 1`: the prepare phase is the last
 * `POX_PREPARE_LENGTH - 1` blocks of a cycle and the first ("mod 0") block of the next, which still
 * prepares the cycle it begins.
 */
export function preparedCycle(burnHeight: number): number | null {
  const offset = burnHeight - POX_FIRST_BURN_HEIGHT;
  if (offset <= 0) return null;
  const index = offset % POX_CYCLE_LENGTH;
  if (index === 0) return poxRewardCycle(burnHeight);
  return index > POX_CYCLE_LENGTH - POX_PREPARE_LENGTH ? poxRewardCycle(burnHeight) + 1 : null;
}
