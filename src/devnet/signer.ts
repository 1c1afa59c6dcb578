import { createHash, createHmac } from 'node:crypto';
import * as secp from '@noble/secp256k1';
import { AUTH_SPONSORED, AUTH_STANDARD, Offsets } from './wire.js';

// Signs cleared transactions (see wire.ts `encodeClearedTx`) with the SIP-005 sighash chain, using the same
// secp256k1 implementation and options as @stacks/transactions (@noble/secp256k1 `signSync`, RFC 6979
// deterministic nonces, low-s), so signatures, and therefore tx ids, are reproducible from the seed. The
// hashes use Node's native SHA-512/256 (the library's pure-JS one is ~5x slower).

// @noble/secp256k1 needs a synchronous HMAC for RFC 6979; @stacks/transactions installs the same one.
secp.utils.hmacSha256Sync = (key: Uint8Array, ...messages: Uint8Array[]) => {
  const hmac = createHmac('sha256', key);
  for (const m of messages) hmac.update(m);
  return new Uint8Array(hmac.digest());
};

export function sha512_256(...parts: Uint8Array[]): Buffer {
  const hash = createHash('sha512-256');
  for (const p of parts) hash.update(p);
  return hash.digest();
}

export interface SignRequest {
  /** cleared transaction bytes */
  cleared: Uint8Array;
  origin: number;
  nonce: number;
  fee: number;
  /** key index of the sponsor, or -1 */
  sponsor: number;
  sponsorNonce: number;
  sponsorFee: number;
}

export interface SignedTx {
  raw: Buffer;
  txid: Buffer;
}

/** Private keys (32 bytes) and signer hashes (hash160 of the compressed public key) by key index. */
export interface KeyMaterial {
  privateKeys: Uint8Array[];
  hash160s: Uint8Array[];
}

function u64(value: number): Buffer {
  const out = Buffer.allocUnsafe(8);
  out.writeBigUInt64BE(BigInt(value));
  return out;
}

/** 65-byte recoverable signature as Stacks serializes it (`MessageSignature`): recovery id, then r and s. */
export function signHash(hash: Uint8Array, privateKey: Uint8Array): Buffer {
  const [compact, recovery] = secp.signSync(hash, privateKey, {
    canonical: true,
    recovered: true,
    der: false,
  });
  const out = Buffer.allocUnsafe(65);
  out[0] = recovery;
  out.set(compact, 1);
  return out;
}

export function signTx(request: SignRequest, keys: KeyMaterial): SignedTx {
  const initial = sha512_256(request.cleared);
  const preSign = sha512_256(initial, Buffer.from([AUTH_STANDARD]), u64(request.fee), u64(request.nonce));
  const signature = signHash(preSign, keys.privateKeys[request.origin]);
  const raw = Buffer.from(request.cleared);
  raw.writeBigUInt64BE(BigInt(request.nonce), Offsets.originNonce);
  raw.writeBigUInt64BE(BigInt(request.fee), Offsets.originFee);
  raw.set(signature, Offsets.originSignature);
  if (request.sponsor >= 0) {
    const postSign = sha512_256(preSign, Buffer.from([0x00]), signature);
    const sponsorPreSign = sha512_256(
      postSign,
      Buffer.from([AUTH_SPONSORED]),
      u64(request.sponsorFee),
      u64(request.sponsorNonce),
    );
    raw.set(keys.hash160s[request.sponsor], Offsets.sponsorSigner);
    raw.writeBigUInt64BE(BigInt(request.sponsorNonce), Offsets.sponsorNonce);
    raw.writeBigUInt64BE(BigInt(request.sponsorFee), Offsets.sponsorFee);
    raw.set(signHash(sponsorPreSign, keys.privateKeys[request.sponsor]), Offsets.sponsorSignature);
  }
  return { raw, txid: sha512_256(raw) };
}
