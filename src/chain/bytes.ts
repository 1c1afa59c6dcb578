// Byte helpers shared by the decoders: hex conversion and a bounds-checked big-endian reader.

/** Bytes of a hex string, with or without a `0x` prefix; throws on odd length or non-hex characters. */
export function hexToBuffer(hex: string): Buffer {
  const start = hex.length >= 2 && hex.charCodeAt(0) === 48 && (hex.charCodeAt(1) | 0x20) === 120 ? 2 : 0;
  const digits = hex.length - start;
  if (digits % 2 !== 0) throw new Error('Hex string is an odd number of digits');
  const buf = Buffer.from(start === 0 ? hex : hex.slice(start), 'hex');
  if (buf.length * 2 !== digits) throw new Error('Invalid hex characters');
  return buf;
}

/** Wraps a Uint8Array as a Buffer without copying. */
export function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

export class ByteReader {
  pos: number;
  constructor(
    readonly buf: Buffer,
    pos = 0,
  ) {
    this.pos = pos;
  }

  /** Throws unless `n` more bytes are available; returns the current position and advances past them. */
  take(n: number): number {
    const p = this.pos;
    if (n < 0 || p + n > this.buf.length) {
      throw new Error(`Unexpected end of data: need ${n} bytes at offset ${p} of ${this.buf.length}`);
    }
    this.pos = p + n;
    return p;
  }

  u8(): number {
    return this.buf[this.take(1)];
  }

  u16(): number {
    return this.buf.readUInt16BE(this.take(2));
  }

  u32(): number {
    return this.buf.readUInt32BE(this.take(4));
  }

  /** u64 as a decimal string. */
  u64String(): string {
    const p = this.take(8);
    const hi = this.buf.readUInt32BE(p);
    const lo = this.buf.readUInt32BE(p + 4);
    if (hi < 0x200000) return String(hi * 0x100000000 + lo);
    return this.buf.readBigUInt64BE(p).toString();
  }

  /** u64 as a JS number (precision is lost above 2^53, as upstream's `Number(nonce)`). */
  u64Number(): number {
    const p = this.take(8);
    return this.buf.readUInt32BE(p) * 0x100000000 + this.buf.readUInt32BE(p + 4);
  }

  hex(n: number): string {
    const p = this.take(n);
    return '0x' + this.buf.toString('hex', p, p + n);
  }

  bytes(n: number): Buffer {
    const p = this.take(n);
    return this.buf.subarray(p, p + n);
  }

  /** A string with a u8 length prefix (contract names, asset names, Clarity names). */
  shortString(): string {
    const n = this.u8();
    const p = this.take(n);
    return this.buf.toString('utf8', p, p + n);
  }
}
