import { createHash } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519';

// The verifiable random function a Nakamoto miner proves its coinbase with: ECVRF-ED25519-SHA512-TAI of
// the IETF draft (irtf-cfrg-vrf-03), as stacks-core implements it (suite byte 3, try-and-increment hash to
// the curve, 80-byte proofs: Gamma, a 16-byte c, s). The tests check it against the draft's test vectors.

const Point = ed25519.Point;
type Point = InstanceType<typeof Point>;
const ORDER = ed25519.CURVE.n;
const SUITE = 0x03;

function sha512(...parts: Uint8Array[]): Buffer {
  const hash = createHash('sha512');
  for (const part of parts) hash.update(part);
  return hash.digest();
}

function littleEndian(bytes: Uint8Array): bigint {
  let n = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(bytes[i]);
  return n;
}

function littleEndianBytes(n: bigint, length: number): Buffer {
  const out = Buffer.alloc(length);
  for (let i = 0; i < length; i++, n >>= 8n) out[i] = Number(n & 0xffn);
  return out;
}

/**
 * The counter bytes of try-and-increment. stacks-core writes 0 as one zero byte, then only the bytes of the
 * counter above 1 << 8i: the counter 1 adds no byte at all (the draft would write 0x01). Followed here, so
 * proofs are the node's wherever the first candidate point is not on the curve.
 */
function counterBytes(counter: number): Buffer {
  if (counter === 0) return Buffer.from([0]);
  const bytes: number[] = [];
  for (let i = 0; i < 8; i++)
    if (counter > 2 ** (8 * i)) bytes.push(Math.floor(counter / 2 ** (8 * i)) & 0xff);
  return Buffer.from(bytes);
}

function hashToCurve(publicKey: Uint8Array, alpha: Uint8Array): Point {
  for (let counter = 0; ; counter++) {
    const candidate = sha512(Buffer.from([SUITE, 0x01]), publicKey, alpha, counterBytes(counter));
    let point: Point;
    try {
      point = Point.fromHex(candidate.subarray(0, 32));
    } catch {
      continue; // not the y coordinate of a curve point: next counter
    }
    return point.clearCofactor();
  }
}

/** The 16-byte challenge over four points. */
function hashPoints(...points: Point[]): Buffer {
  return sha512(Buffer.from([SUITE, 0x02]), ...points.map((p) => p.toRawBytes())).subarray(0, 16);
}

/** The VRF public key (an Ed25519 public key) of a 32-byte secret key. */
export function vrfPublicKey(secretKey: Uint8Array): Buffer {
  return Buffer.from(ed25519.getPublicKey(secretKey));
}

/** An 80-byte proof that the holder of `secretKey` evaluated the VRF on `alpha`. */
export function vrfProve(secretKey: Uint8Array, alpha: Uint8Array): Buffer {
  const { scalar: x, prefix, pointBytes } = ed25519.utils.getExtendedPublicKey(secretKey);
  const h = hashToCurve(pointBytes, alpha);
  const gamma = h.multiply(x);
  const k = littleEndian(sha512(prefix, h.toRawBytes())) % ORDER;
  const c = hashPoints(h, gamma, Point.BASE.multiply(k), h.multiply(k));
  const s = (k + littleEndian(c) * x) % ORDER;
  return Buffer.concat([gamma.toRawBytes(), c, littleEndianBytes(s, 32)]);
}

/**
 * Checks an 80-byte proof against the public key and `alpha` (the node's verification).
 * @internal the node's check of a proof, exported for the tests
 */
export function vrfVerify(publicKey: Uint8Array, proof: Uint8Array, alpha: Uint8Array): boolean {
  if (proof.length !== 80) return false;
  let gamma: Point;
  let y: Point;
  try {
    gamma = Point.fromHex(proof.subarray(0, 32));
    y = Point.fromHex(publicKey);
  } catch {
    return false;
  }
  if (gamma.isSmallOrder()) return false;
  const c = littleEndian(proof.subarray(32, 48));
  const s = littleEndian(proof.subarray(48, 80));
  if (s >= ORDER) return false;
  const h = hashToCurve(publicKey, alpha);
  const u = Point.BASE.multiplyUnsafe(s).subtract(y.multiplyUnsafe(c));
  const v = h.multiplyUnsafe(s).subtract(gamma.multiplyUnsafe(c));
  return hashPoints(h, gamma, u, v).equals(Buffer.from(proof.subarray(32, 48)));
}
