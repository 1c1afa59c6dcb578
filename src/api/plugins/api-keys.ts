import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { caches } from '../../caches.js';
import { apiKeysVersion, listenForApiKeys, validApiKeys } from '../../store/read/api-keys.js';
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
// every key. The id names the key's entry in each process's set of valid keys (`ApiKeyRegistry`); the hashes
// are compared in constant time.

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

/** Creates and stores a key; returns its text (to print once) and id. Usable at once in this process. */
export async function createApiKey(store: Store, label: string): Promise<NewApiKey> {
  for (;;) {
    const created = generateApiKey();
    // 48 random bits of id: a collision is astronomically rare, but cheap to survive.
    const key = { id: created.id, key_hash: created.key_hash, label };
    if (await insertApiKey(store.sql, store.engine, key)) {
      await refreshRegistries(store);
      return created;
    }
  }
}

/** Revokes a key: refused at once by this process, by the others as `ApiKeyRegistry` says. */
export async function revokeKey(store: Store, id: string): Promise<'unknown' | 'already' | 'revoked'> {
  const outcome = await revokeApiKey(store.sql, store.engine, id);
  for (const registry of registries.get(store.db) ?? []) registry.forget(id);
  await refreshRegistries(store);
  return outcome;
}

/** The registries of this process, by the database they read keys from. */
const registries = new WeakMap<object, Set<ApiKeyRegistry>>();

async function refreshRegistries(store: Store): Promise<void> {
  await Promise.all([...(registries.get(store.db) ?? [])].map((registry) => registry.refresh()));
}

export interface ApiKeyIdentity {
  id: string;
  label: string;
}

interface ValidKey {
  /** SHA-256 of the key as 32 bytes */
  hash: Buffer;
  label: string;
}

export interface ApiKeyRegistryOptions {
  /**
   * How often the keys are checked for a change no notification announced: a read replica gets none (NOTIFY
   * is not replicated), and a notification sent while the listening connection was down is lost.
   */
  refreshMs: number;
  logger: { warn(obj: object, msg: string): void; debug(obj: object, msg: string): void };
  /** Where `last_used_at` is written, when the store keys are read from is a read-only replica. */
  touchStore?: Store;
  /** A key's `last_used_at` is written at most this often (default 30 s). */
  touchEveryMs?: number;
}

/**
 * The valid API keys, held in memory by every process that serves the API: a presented key is verified
 * without a database query, so a client sending made-up keys costs nothing but a hash, and a valid key is
 * known whatever its IP did before (see access-control.ts). The set is read whole at start, then again when
 * it changed: at once in the process that created or revoked a key (`createApiKey`, `revokeKey`), on a
 * notification for the other processes on PostgreSQL (`api_keys` changes notify `API_KEYS_CHANNEL`), and
 * within `refreshMs` everywhere, replicas included (a fingerprint of the table, `apiKeysVersion`, is read
 * and the set only when it moved). While the database cannot be read the last set read stays in force.
 */
export class ApiKeyRegistry {
  private keys = new Map<string, ValidKey>();
  private version: string | undefined;
  private loading: Promise<void> | undefined;
  /** a read that follows the one under way (a change may have come after it started) */
  private readAgain: Promise<void> | undefined;
  /** counts `forget` calls: a read that overlapped one reads again */
  private forgotten = 0;
  private readonly touchedAt = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private unlisten: (() => Promise<void>) | undefined;
  private closed = false;

  private constructor(
    private readonly store: Store,
    private readonly options: ApiKeyRegistryOptions,
  ) {}

  /** Reads the keys, then keeps them fresh until `close`. A database that cannot be read now is retried. */
  static async open(store: Store, options: ApiKeyRegistryOptions): Promise<ApiKeyRegistry> {
    const registry = new ApiKeyRegistry(store, options);
    caches.join(
      {
        name: 'API keys',
        layer: 'access control',
        key: 'a key id',
        invalidatedBy:
          'a key created or revoked: at once in this process, by NOTIFY in the others, else within a few seconds (a check of the table)',
        bound: "the table's valid keys, and when each one's use was last written",
        file: 'src/api/plugins/api-keys.ts',
      },
      registry,
    );
    let registered = registries.get(store.db);
    if (!registered) registries.set(store.db, (registered = new Set()));
    registered.add(registry);
    registry.timer = setInterval(() => void registry.refresh().catch(() => {}), options.refreshMs);
    registry.timer.unref();
    try {
      registry.unlisten = await listenForApiKeys(store, () => void registry.refresh().catch(() => {}));
      await registry.refresh();
    } catch (err) {
      options.logger.warn(
        { err: (err as Error).message },
        'API keys not read yet: the database is unavailable',
      );
    }
    return registry;
  }

  /** Whether the keys were read at least once (until then `verify` reads them). */
  get loaded(): boolean {
    return this.version !== undefined;
  }

  /**
   * The identity of a valid key, or null for a malformed, unknown or revoked one. Reads the keys only when
   * they were never read (the database was down at start): then it throws while the database is down.
   */
  async verify(key: string): Promise<ApiKeyIdentity | null> {
    if (!this.loaded) await this.refresh();
    const id = apiKeyId(key);
    if (id === null) return null;
    const valid = this.keys.get(id);
    const presented = createHash('sha256').update(key, 'utf8').digest();
    // Constant-time, and done even when the id has no usable key (against zeros), so the check itself takes
    // the same time whatever the outcome.
    const equal = timingSafeEqual(presented, valid?.hash ?? DUMMY_HASH);
    if (!equal || valid === undefined) return null;
    this.touch(id);
    return { id, label: valid.label };
  }

  /** A key revoked in this process: refused from now on, before the set is read again. */
  forget(id: string) {
    this.keys.delete(id);
    this.forgotten += 1;
  }

  /**
   * Reads the table's fingerprint, and the keys when it moved; resolves once a read that began after this
   * call has ended. Calls that come together share the reads.
   */
  refresh(): Promise<void> {
    if (!this.loading) {
      this.loading = this.read().finally(() => (this.loading = undefined));
      return this.loading;
    }
    this.readAgain ??= this.loading
      .catch(() => {})
      .then(() => {
        this.readAgain = undefined;
        return this.refresh();
      });
    return this.readAgain;
  }

  private async read(): Promise<void> {
    for (;;) {
      const forgotten = this.forgotten;
      const version = await apiKeysVersion(this.store.sql);
      if (version === this.version) return;
      const keys = new Map<string, ValidKey>();
      for (const row of await validApiKeys(this.store.sql)) {
        if (!/^[0-9a-f]{64}$/.test(row.key_hash)) continue;
        keys.set(row.id, { hash: Buffer.from(row.key_hash, 'hex'), label: row.label });
      }
      // a key revoked while this read ran may have been read before the revocation: read again
      if (forgotten !== this.forgotten) continue;
      this.keys = keys;
      this.version = version;
      this.options.logger.debug({ keys: keys.size }, 'API keys read');
      return;
    }
  }

  /** The server is closing: stops listening and polling. */
  async close() {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    registries.get(this.store.db)?.delete(this);
    await this.unlisten?.().catch(() => {});
  }

  /** Best effort, at most once per `touchEveryMs` per key: a failed touch never fails a request. */
  private touch(id: string) {
    const now = Date.now();
    if (now - (this.touchedAt.get(id) ?? 0) < (this.options.touchEveryMs ?? 30_000)) return;
    this.touchedAt.set(id, now);
    touchApiKey((this.options.touchStore ?? this.store).sql, id).catch((err: unknown) => {
      this.options.logger.debug(
        { key_id: id, err: (err as Error).message },
        'api key last_used_at not updated',
      );
    });
  }
}

const DUMMY_HASH = Buffer.alloc(32);
