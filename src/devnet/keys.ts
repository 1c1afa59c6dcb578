import { createHash } from 'node:crypto';
import * as secp from '@noble/secp256k1';
import { c32Address } from '../chain/c32.js';
import type { KeyMaterial } from './signer.js';
import { standardPrincipalCV, type CV } from './wire.js';

/** Mainnet single-sig (P2PKH) address version: addresses start with `SP`. */
export const MAINNET_P2PKH = 22;

export interface Account {
  /** index in the key table (what the signer is told) */
  key: number;
  address: string;
  hash160: Buffer;
  /** the address as a Clarity principal, serialized */
  principal: CV;
}

/** A private key derived from the seed and a label (e.g. `account:7`, `miner:2`); always a valid scalar. */
export function derivePrivateKey(seed: string, label: string): Buffer {
  for (let attempt = 0; ; attempt++) {
    const key = createHash('sha256').update(`stacks-demo-chain:${seed}:key:${label}:${attempt}`).digest();
    if (secp.utils.isValidPrivateKey(key)) return key;
  }
}

export function hash160(bytes: Uint8Array): Buffer {
  return createHash('ripemd160').update(createHash('sha256').update(bytes).digest()).digest();
}

/** The deterministic key table: every account and miner of the generated chain. */
export class KeyRing {
  readonly privateKeys: Buffer[] = [];
  readonly accounts: Account[] = [];

  constructor(private readonly seed: string) {}

  add(label: string): Account {
    const privateKey = derivePrivateKey(this.seed, label);
    const signer = hash160(secp.getPublicKey(privateKey, true));
    const account: Account = {
      key: this.privateKeys.length,
      address: c32Address(MAINNET_P2PKH, signer),
      hash160: signer,
      principal: standardPrincipalCV(MAINNET_P2PKH, signer),
    };
    this.privateKeys.push(privateKey);
    this.accounts.push(account);
    return account;
  }

  material(): KeyMaterial {
    return { privateKeys: this.privateKeys, hash160s: this.accounts.map((a) => a.hash160) };
  }
}
