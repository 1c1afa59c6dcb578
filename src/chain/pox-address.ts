// PoX reward addresses: Bitcoin address strings <-> the `{version, hashbytes}` tuple of the pox contracts.
// Version bytes: 0 P2PKH, 1 P2SH, 2 P2SH-P2WPKH, 3 P2SH-P2WSH, 4 P2WPKH, 5 P2WSH, 6 P2TR.
import { sha256 } from '@noble/hashes/sha2';
import { bech32, bech32m, createBase58check } from '@scure/base';

const base58check = createBase58check(sha256);

export interface PoxAddress {
  version: number;
  hashbytes: Uint8Array;
}

/** Version byte and hash of a base58check address; null when it is not one. */
function base58CheckDecode(s: string): { version: number; hash: Uint8Array } | null {
  let payload: Uint8Array;
  try {
    payload = base58check.decode(s);
  } catch {
    return null;
  }
  return payload.length > 0 ? { version: payload[0], hash: payload.slice(1) } : null;
}

/**
 * Witness version and program of a segwit address: v0 checksummed with bech32 (BIP-173), v1 and up with
 * bech32m (BIP-350); null when it is neither.
 */
function segwitDecode(s: string): { witnessVersion: number; program: Uint8Array } | null {
  for (const codec of [bech32, bech32m]) {
    const decoded = codec.decodeUnsafe(s);
    if (!decoded || decoded.words.length === 0) continue;
    const witnessVersion = decoded.words[0];
    if ((witnessVersion === 0) !== (codec === bech32)) continue;
    const program = codec.fromWordsUnsafe(decoded.words.slice(1));
    if (program) return { witnessVersion, program };
  }
  return null;
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
    const segwit = segwitDecode(address);
    if (segwit) {
      const { witnessVersion, program } = segwit;
      if (witnessVersion === 0 && program.length === 20) return { version: 4, hashbytes: program };
      if (witnessVersion === 0 && program.length === 32) return { version: 5, hashbytes: program };
      if (witnessVersion === 1 && program.length === 32) return { version: 6, hashbytes: program };
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
