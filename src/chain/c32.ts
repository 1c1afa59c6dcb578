// Crockford base-32 "c32check" encoding of Stacks addresses (version byte + hash160 + 4-byte checksum).
import { sha256 } from '@noble/hashes/sha2';

const C32_ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** char code -> c32 digit, -1 when invalid. Lenient like the reference decoder: lowercase, O→0, L/I→1. */
const C32_DECODE = new Int8Array(128).fill(-1);
for (let i = 0; i < C32_ALPHABET.length; i++) {
  C32_DECODE[C32_ALPHABET.charCodeAt(i)] = i;
  C32_DECODE[C32_ALPHABET.toLowerCase().charCodeAt(i)] = i;
}
for (const [alias, digit] of [
  ['O', 0],
  ['L', 1],
  ['I', 1],
] as const) {
  C32_DECODE[alias.charCodeAt(0)] = digit;
  C32_DECODE[alias.toLowerCase().charCodeAt(0)] = digit;
}

function checksum(version: number, data: Uint8Array): Uint8Array {
  const buf = new Uint8Array(data.length + 1);
  buf[0] = version;
  buf.set(data, 1);
  return sha256(sha256(buf)).subarray(0, 4);
}

/** Big-endian bytes to c32 digits; one extra leading '0' per leading zero byte (c32check semantics). */
export function c32Encode(bytes: Uint8Array): string {
  const digits: string[] = [];
  let carry = 0;
  let carryBits = 0;
  for (let i = bytes.length - 1; i >= 0; i--) {
    carry |= bytes[i] << carryBits;
    carryBits += 8;
    while (carryBits >= 5) {
      digits.push(C32_ALPHABET[carry & 31]);
      carry >>>= 5;
      carryBits -= 5;
    }
  }
  if (carryBits > 0) digits.push(C32_ALPHABET[carry & 31]);
  let end = digits.length;
  while (end > 0 && digits[end - 1] === '0') end--;
  let out = '';
  for (let i = 0; i < bytes.length && bytes[i] === 0; i++) out += '0';
  for (let i = end - 1; i >= 0; i--) out += digits[i];
  return out;
}

/** c32 digits (lenient alphabet) to big-endian bytes, or null on an invalid character. */
export function c32Decode(s: string): Uint8Array | null {
  const out: number[] = [];
  let carry = 0;
  let carryBits = 0;
  for (let i = s.length - 1; i >= 0; i--) {
    const code = s.charCodeAt(i);
    const digit = code < 128 ? C32_DECODE[code] : -1;
    if (digit < 0) return null;
    carry |= digit << carryBits;
    carryBits += 5;
    if (carryBits >= 8) {
      out.push(carry & 0xff);
      carry >>>= 8;
      carryBits -= 8;
    }
  }
  if (carryBits > 0) out.push(carry & 0xff);
  let end = out.length;
  while (end > 0 && out[end - 1] === 0) end--;
  let leadingZeros = 0;
  for (let i = 0; i < s.length && C32_DECODE[s.charCodeAt(i)] === 0; i++) leadingZeros++;
  const result = new Uint8Array(leadingZeros + end);
  for (let i = 0; i < end; i++) result[leadingZeros + i] = out[end - 1 - i];
  return result;
}

const addressCache = new Map<string, string>();
const ADDRESS_CACHE_MAX = 50_000;

/**
 * Stacks address string ('S' + version char + c32(hash160 ‖ checksum)) from a version (0–31) and a
 * 20-byte hash. Results are memoised: the same principals recur constantly in chain data.
 */
export function c32Address(version: number, hash160: Uint8Array): string {
  if (version < 0 || version >= 32) throw new Error(`Invalid c32 address version ${version}`);
  const key =
    String.fromCharCode(version) +
    Buffer.from(hash160.buffer, hash160.byteOffset, hash160.length).toString('latin1');
  const cached = addressCache.get(key);
  if (cached !== undefined) return cached;
  const body = new Uint8Array(hash160.length + 4);
  body.set(hash160, 0);
  body.set(checksum(version, hash160), hash160.length);
  const address = 'S' + C32_ALPHABET[version] + c32Encode(body);
  if (addressCache.size >= ADDRESS_CACHE_MAX) addressCache.clear();
  addressCache.set(key, address);
  return address;
}

/**
 * Decodes a Stacks address like the reference codec (`c32_address_decode`): length > 5, the first
 * character is not inspected, lenient alphabet, checksum verified, exactly 20 data bytes.
 * Returns null when invalid.
 */
export function c32AddressDecode(address: string): { version: number; hash160: Uint8Array } | null {
  if (address.length <= 5) return null;
  const versionCode = address.charCodeAt(1);
  const version = versionCode < 128 ? C32_DECODE[versionCode] : -1;
  if (version < 0) return null;
  const first = address.charCodeAt(0);
  if (first >= 128) return null;
  const decoded = c32Decode(address.slice(2));
  if (decoded === null || decoded.length !== 24) return null;
  const hash160 = decoded.subarray(0, 20);
  const sum = checksum(version, hash160);
  for (let i = 0; i < 4; i++) if (sum[i] !== decoded[20 + i]) return null;
  return { version, hash160: hash160.slice() };
}
