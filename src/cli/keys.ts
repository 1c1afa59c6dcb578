import { createApiKey } from '../api/plugins/api-keys.js';
import { listApiKeys } from '../store/read/api-keys.js';
import type { Store } from '../store/store.js';
import { revokeApiKey } from '../store/write/api-keys.js';

export interface KeysOutput {
  /** What scripts read: the new key, the list. */
  out: (text: string) => void;
  /** What people read: notes and confirmations. */
  info: (text: string) => void;
}

export class KeysUsageError extends Error {}

function time(value: Date | null): string {
  return value ? value.toISOString() : '-';
}

/** `keys create|list|revoke`. Returns the process exit code. */
export async function runKeysCommand(
  store: Store,
  args: { action?: string; id?: string; label?: string },
  output: KeysOutput,
): Promise<number> {
  switch (args.action) {
    case 'create': {
      const label = args.label?.trim();
      if (!label) throw new KeysUsageError('keys create needs --label L (who or what the key is for)');
      const created = await createApiKey(store, label);
      output.info(`API key ${created.id} created for "${label}". It is shown only this once: store it now.`);
      output.out(created.key);
      return 0;
    }
    case 'list': {
      const keys = await listApiKeys(store.sql);
      const rows = [
        ['id', 'label', 'created', 'last used', 'revoked'],
        ...keys.map((k) => [k.id, k.label, time(k.created_at), time(k.last_used_at), time(k.revoked_at)]),
      ];
      const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
      for (const row of rows)
        output.out(
          row
            .map((cell, i) => cell.padEnd(widths[i]))
            .join('  ')
            .trimEnd(),
        );
      return 0;
    }
    case 'revoke': {
      if (!args.id) throw new KeysUsageError('keys revoke needs the key id (see keys list)');
      const outcome = await revokeApiKey(store.sql, args.id);
      if (outcome === 'unknown') {
        output.info(`no API key with id ${args.id}`);
        return 1;
      }
      output.info(
        outcome === 'revoked' ? `API key ${args.id} revoked` : `API key ${args.id} was already revoked`,
      );
      return 0;
    }
    default:
      throw new KeysUsageError(
        args.action ? `unknown keys action "${args.action}"` : 'keys needs an action: create, list or revoke',
      );
  }
}
