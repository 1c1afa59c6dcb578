import { createHash } from 'node:crypto';

// Deterministic randomness for the chain generator: one seeded stream for decisions (sfc32), and
// hash-derived bytes for identifiers (block hashes, coinbase payloads), so an id never depends on how many
// decisions were drawn before it.

export class Random {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: string) {
    const h = createHash('sha256').update(`stacks-demo-chain:${seed}`).digest();
    this.a = h.readUInt32LE(0);
    this.b = h.readUInt32LE(4);
    this.c = h.readUInt32LE(8);
    this.d = h.readUInt32LE(12);
    for (let i = 0; i < 16; i++) this.next32();
  }

  /** sfc32: a small, fast generator with a 128-bit state. */
  next32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** Uniform in [0, 1). */
  float(): number {
    return this.next32() / 4294967296;
  }

  /** Uniform integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.float() * (max - min + 1));
  }

  chance(p: number): boolean {
    return this.float() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.float() * items.length)];
  }

  /** Log-uniform integer in [min, max]: amounts spread over orders of magnitude, as on a real chain. */
  logUniform(min: number, max: number): bigint {
    const v = Math.exp(Math.log(min) + this.float() * (Math.log(max) - Math.log(min)));
    return BigInt(Math.max(min, Math.min(max, Math.round(v))));
  }
}

/**
 * Zipf-like selection over ranks 0..n-1 (rank r drawn with weight 1/(r+1)^s): a few very busy principals
 * and a long tail of quiet ones. O(n) memory for the cumulative table, O(log n) per draw.
 */
export class Zipf {
  private readonly cdf: Float64Array;

  constructor(n: number, s: number) {
    this.cdf = new Float64Array(n);
    let total = 0;
    for (let r = 0; r < n; r++) {
      total += 1 / Math.pow(r + 1, s);
      this.cdf[r] = total;
    }
    for (let r = 0; r < n; r++) this.cdf[r] /= total;
  }

  draw(random: Random): number {
    const u = random.float();
    let lo = 0;
    let hi = this.cdf.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.cdf[mid] < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/** 32 bytes derived from the seed and a label: stable identifiers (hashes) independent of draw order. */
export function derivedBytes(seed: string, label: string, length = 32): Buffer {
  const out = createHash('sha512').update(`stacks-demo-chain:${seed}:${label}`).digest();
  return out.subarray(0, length);
}
