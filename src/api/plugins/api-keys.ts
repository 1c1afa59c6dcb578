import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { findApiKey } from '../../store/read/api-keys.js';
import type { Store } from '../../store/store.js';
import { insertApiKey, revokeApiKey, touchApiKey } from '../../store/write/api-keys.js';

// An API key is `sk_<id>_<secret>`: `id` is 12 random hex digits, public (it names the key in `keys list`,
// `keys revoke` and logs); `secret` is 32 random bytes in base64url (43 characters). The database holds only
// the SHA-256 of the whole key text.
//
// Why a plain SHA-256 and not scrypt or a peppered HMAC: the secret is 256 random bits, not a password.
// Slow hashes exist to stop guessing low-entropy secrets from a leaked hash; nobody can enumerate 2^256
// candidates, so scrypt would only add CPU per verification (and a DoS lever on cache misses). A pepper
// would protect a leaked table only if the pepper did not leak with it, which for 256-bit secrets buys
// nothing, and it is one more secret every instance must share and nobody can rotate without reissuing
// every key. The id lets us fetch one row by primary key and compare the hashes in constant time.

const KEY_PATTERN = /^sk_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$/;

export interface NewApiKey {
  id: string;
  /** The key text: shown once to its owner, never stored. */
  key: string;
  key_hash: string;
}

function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

function generateApiKey(): NewApiKey {
  const id = randomBytes(6).toString('hex');
  const key = `sk_${id}_${randomBytes(32).toString('base64url')}`;
  return { id, key, key_hash: hashApiKey(key) };
}

/** The public id of a well-formed key, or null (a malformed key is rejected without a database query). */
function apiKeyId(key: string): string | null {
  return KEY_PATTERN.exec(key)?.[1] ?? null;
}

/** Creates and stores a key; returns its text (to print once) and id. */
export async function createApiKey(store: Store, label: string): Promise<NewApiKey> {
  for (;;) {
    const created = generateApiKey();
    // 48 random bits of id: a collision is astronomically rare, but cheap to survive.
    if (await insertApiKey(store.sql, { id: created.id, key_hash: created.key_hash, label })) return created;
  }
}

/**
 * Revokes a key. The verifiers of this process on that database forget it at once (a key revoked through
 * a running server is refused from the next request); other processes within their cache period.
 */
export async function revokeKey(store: Store, id: string): Promise<'unknown' | 'already' | 'revoked'> {
  const outcome = await revokeApiKey(store.sql, id);
  for (const verifier of verifiers.get(store.db) ?? []) verifier.forget(id);
  return outcome;
}

/** The verifiers of this process, by the database they read keys from. */
const verifiers = new WeakMap<object, Set<ApiKeyVerifier>>();

export interface ApiKeyIdentity {
  id: string;
  label: string;
}

interface CacheEntry {
  /** SHA-256 of the key as 32 bytes; null when no usable key has this id (unknown or revoked). */
  hash: Buffer | null;
  label: string;
  expiresAt: number;
}

export interface ApiKeyVerifierOptions {
  /** How long a key row is trusted without asking the database again: also how long a revocation may take. */
  cacheTtlMs: number;
  /** Entries kept (keys and unknown ids); the oldest go first. */
  maxEntries?: number;
  logger?: { debug(obj: object, msg: string): void };
  now?: () => number;
  /** Where `last_used_at` is written, when the store keys are read from is a read-only replica. */
  touchStore?: Store;
}

/**
 * Verifies presented keys. Key rows (and unknown ids) are cached in process for `cacheTtlMs`, so a keyed
 * request costs a database lookup only once per key per period per instance; a revocation therefore
 * takes effect within `cacheTtlMs`. Concurrent misses on one id share a single query.
 */
export class ApiKeyVerifier {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly loading = new Map<string, Promise<CacheEntry>>();
  private readonly maxEntries: number;
  private readonly now: () => number;
  /** Counts `forget` calls: a lookup that overlapped one does not cache its answer. */
  private forgotten = 0;

  constructor(
    private readonly store: Store,
    private readonly options: ApiKeyVerifierOptions,
  ) {
    this.maxEntries = options.maxEntries ?? 10_000;
    this.now = options.now ?? Date.now;
    let registered = verifiers.get(store.db);
    if (!registered) verifiers.set(store.db, (registered = new Set()));
    registered.add(this);
  }

  /** Drops what is cached about a key id (it was revoked in this process). */
  forget(id: string) {
    this.cache.delete(id);
    this.forgotten += 1;
  }

  /** The server is closing: revocations need not reach this verifier any more. */
  close() {
    verifiers.get(this.store.db)?.delete(this);
  }

  /** The identity of a valid key, or null for a malformed, unknown or revoked one. */
  async verify(key: string): Promise<ApiKeyIdentity | null> {
    const id = apiKeyId(key);
    if (id === null) return null;
    const entry = await this.entry(id);
    const presented = createHash('sha256').update(key, 'utf8').digest();
    // Constant-time, and done even when the id has no usable key (against zeros), so the check itself takes
    // the same time whatever the outcome.
    const equal = timingSafeEqual(presented, entry.hash ?? DUMMY_HASH);
    return equal && entry.hash !== null ? { id, label: entry.label } : null;
  }

  /**
   * Whether verifying `key` would query the database for an id this instance does not know as a valid key
   * (never seen, or seen unknown or revoked): what a client making keys up costs. A key seen valid whose
   * cache entry expired is looked up again without this question.
   */
  needsFirstLookup(key: string): boolean {
    const id = apiKeyId(key);
    if (id === null) return false;
    const cached = this.cache.get(id);
    return !cached || (cached.hash === null && cached.expiresAt <= this.now());
  }

  private async entry(id: string): Promise<CacheEntry> {
    const cached = this.cache.get(id);
    if (cached && cached.expiresAt > this.now()) return cached;
    let pending = this.loading.get(id);
    if (!pending) {
      pending = this.load(id).finally(() => this.loading.delete(id));
      this.loading.set(id, pending);
    }
    return pending;
  }

  private async load(id: string): Promise<CacheEntry> {
    const forgotten = this.forgotten;
    const row = await findApiKey(this.store.sql, id);
    const usable = row !== undefined && !row.revoked && /^[0-9a-f]{64}$/.test(row.key_hash);
    const entry: CacheEntry = {
      hash: usable ? Buffer.from(row.key_hash, 'hex') : null,
      label: row?.label ?? '',
      expiresAt: this.now() + this.options.cacheTtlMs,
    };
    // a key revoked while this lookup ran may have been read before the revocation: not kept
    if (forgotten !== this.forgotten) return entry;
    this.cache.delete(id);
    this.cache.set(id, entry);
    if (this.cache.size > this.maxEntries) this.cache.delete(this.cache.keys().next().value as string);
    if (usable) this.touch(id);
    return entry;
  }

  /** Best effort: a read-only replica cannot write, and a failed touch never fails a request. */
  private touch(id: string) {
    touchApiKey((this.options.touchStore ?? this.store).sql, id).catch((err: unknown) => {
      this.options.logger?.debug(
        { key_id: id, err: (err as Error).message },
        'api key last_used_at not updated',
      );
    });
  }
}

const DUMMY_HASH = Buffer.alloc(32);
