// PoX reward addresses: Bitcoin address strings <-> the `{version, hashbytes}` tuple of the pox contracts.
// Version bytes: 0 P2PKH, 1 P2SH, 2 P2SH-P2WPKH, 3 P2SH-P2WSH, 4 P2WPKH, 5 P2WSH, 6 P2TR.
import { sha256 } from '@noble/hashes/sha2';

const B58_ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const B58_MAP = new Int8Array(128).fill(-1);
for (let i = 0; i < B58_ALPHABET.length; i++) B58_MAP[B58_ALPHABET.charCodeAt(i)] = i;

const BECH32_CHARSET = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';
const BECH32_CONST = 1;
const BECH32M_CONST = 0x2bc830a3;

export interface PoxAddress {
  version: number;
  hashbytes: Uint8Array;
}

function base58Decode(s: string): Uint8Array | null {
  const bytes: number[] = [];
  for (let i = 0; i < s.length; i++) {
    const code = s.charCodeAt(i);
    let carry = code < 128 ? B58_MAP[code] : -1;
    if (carry < 0) return null;
    for (let j = 0; j < bytes.length; j++) {
      carry += bytes[j] * 58;
      bytes[j] = carry & 0xff;
      carry >>= 8;
    }
    while (carry > 0) {
      bytes.push(carry & 0xff);
      carry >>= 8;
    }
  }
  for (let i = 0; i < s.length && s[i] === '1'; i++) bytes.push(0);
  return Uint8Array.from(bytes.reverse());
}

function base58CheckDecode(s: string): { version: number; hash: Uint8Array } | null {
  const raw = base58Decode(s);
  if (!raw || raw.length < 5) return null;
  const payload = raw.subarray(0, raw.length - 4);
  const sum = sha256(sha256(payload));
  for (let i = 0; i < 4; i++) if (sum[i] !== raw[raw.length - 4 + i]) return null;
  return { version: payload[0], hash: payload.slice(1) };
}

function polymod(values: number[]): number {
  const GEN = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3];
  let chk = 1;
  for (const v of values) {
    const top = chk >>> 25;
    chk = ((chk & 0x1ffffff) << 5) ^ v;
    for (let i = 0; i < 5; i++) if ((top >>> i) & 1) chk ^= GEN[i];
  }
  return chk >>> 0;
}

function bech32Decode(s: string): { hrp: string; words: number[]; constant: number } | null {
  if (s !== s.toLowerCase() && s !== s.toUpperCase()) return null;
  const lower = s.toLowerCase();
  const sep = lower.lastIndexOf('1');
  if (sep < 1 || sep + 7 > lower.length) return null;
  const hrp = lower.slice(0, sep);
  const words: number[] = [];
  for (let i = sep + 1; i < lower.length; i++) {
    const w = BECH32_CHARSET.indexOf(lower[i]);
    if (w < 0) return null;
    words.push(w);
  }
  const expanded: number[] = [];
  for (let i = 0; i < hrp.length; i++) expanded.push(hrp.charCodeAt(i) >> 5);
  expanded.push(0);
  for (let i = 0; i < hrp.length; i++) expanded.push(hrp.charCodeAt(i) & 31);
  const constant = polymod(expanded.concat(words));
  if (constant !== BECH32_CONST && constant !== BECH32M_CONST) return null;
  return { hrp, words: words.slice(0, -6), constant };
}

function fromWords(words: number[]): Uint8Array | null {
  let acc = 0;
  let bits = 0;
  const out: number[] = [];
  for (const w of words) {
    acc = (acc << 5) | w;
    bits += 5;
    while (bits >= 8) {
      bits -= 8;
      out.push((acc >> bits) & 0xff);
    }
  }
  if (bits >= 5 || (acc & ((1 << bits) - 1)) !== 0) return null;
  return Uint8Array.from(out);
}

/**
 * Decodes a Bitcoin address (base58check P2PKH/P2SH, bech32 v0 P2WPKH/P2WSH, bech32m v1 P2TR, any
 * network) into a PoX address, like @stacks/stacking's `decodeBtcAddress`. Throws when invalid.
 */
export function decodeBtcAddress(address: string): PoxAddress {
  if (/^(1|2|3|m|n)/.test(address)) {
    const b58 = base58CheckDecode(address);
    if (b58) {
      if (b58.version === 0x00 || b58.version === 0x6f) return { version: 0, hashbytes: b58.hash };
      if (b58.version === 0x05 || b58.version === 0xc4) return { version: 1, hashbytes: b58.hash };
    }
  } else if (/^(bc|tb|bcrt)1/i.test(address)) {
    const b32 = bech32Decode(address);
    if (b32 && b32.words.length > 0) {
      const witnessVersion = b32.words[0];
      const data = fromWords(b32.words.slice(1));
      const expected = witnessVersion === 0 ? BECH32_CONST : BECH32M_CONST;
      if (data && b32.constant === expected) {
        if (witnessVersion === 0 && data.length === 20) return { version: 4, hashbytes: data };
        if (witnessVersion === 0 && data.length === 32) return { version: 5, hashbytes: data };
        if (witnessVersion === 1 && data.length === 32) return { version: 6, hashbytes: data };
      }
    }
  }
  throw new Error(`'${address}' is not a valid P2PKH/P2SH/P2WPKH/P2WSH/P2TR address`);
}

/**
 * The PoX address upstream ends up with after converting a pox-contract tuple to a Bitcoin address
 * and back (`poxAddressToBtcAddress` then `poxAddressToTuple`): P2SH-wrapped segwit versions collapse
 * to P2SH, segwit v0 takes its version from the hash length. Null when no Bitcoin address can be
 * made (upstream then falls back); throws where upstream's round trip throws.
 */
export function roundTripPoxAddress(version: number, hashbytes: Uint8Array): PoxAddress | null {
  switch (version) {
    case 0:
      return { version: 0, hashbytes };
    case 1:
    case 2:
    case 3:
      return { version: 1, hashbytes };
    case 4:
    case 5:
      if (hashbytes.length === 20) return { version: 4, hashbytes };
      if (hashbytes.length === 32) return { version: 5, hashbytes };
      throw new Error('Invalid native segwit witness version and byte length');
    case 6:
      if (hashbytes.length === 32) return { version: 6, hashbytes };
      throw new Error('Invalid native segwit witness version and byte length');
    default:
      return null;
  }
}

/** PoX address of a Stacks address's hash, as `c32ToB58` + `decodeBtcAddress` give it. */
export function poxAddressFromStacksAddress(version: number, hash160: Uint8Array): PoxAddress {
  // c32ToB58 maps 22/26 to P2PKH and 20/21 to P2SH versions and passes other bytes through unchanged.
  if (version === 22 || version === 26 || version === 0x00 || version === 0x6f) {
    return { version: 0, hashbytes: hash160 };
  }
  if (version === 20 || version === 21 || version === 0x05 || version === 0xc4) {
    return { version: 1, hashbytes: hash160 };
  }
  throw new Error(`No PoX address for Stacks address version ${version}`);
}
