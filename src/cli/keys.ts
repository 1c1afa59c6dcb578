import { createApiKey, revokeKey } from '../api/plugins/api-keys.js';
import {
  askDirectoryHolder,
  DatabaseAccessError,
  DatabaseInUseError,
  type ControlHandler,
} from '../store/directory-lock.js';
import { listApiKeys } from '../store/read/api-keys.js';
import type { Store } from '../store/store.js';

export interface KeysOutput {
  /** What scripts read: the new key, the list. */
  out: (text: string) => void;
  /** What people read: notes and confirmations. */
  info: (text: string) => void;
}

export interface KeysArgs {
  action?: string;
  id?: string;
  label?: string;
}

export class KeysUsageError extends Error {}

type KeysAction = { action: 'create'; label: string } | { action: 'list' } | { action: 'revoke'; id: string };

/** The command asked for, or KeysUsageError saying what is missing. */
function keysAction(args: KeysArgs): KeysAction {
  switch (args.action) {
    case 'create': {
      const label = args.label?.trim();
      if (!label) throw new KeysUsageError('keys create needs --label L (who or what the key is for)');
      return { action: 'create', label };
    }
    case 'list':
      return { action: 'list' };
    case 'revoke':
      if (!args.id) throw new KeysUsageError('keys revoke needs the key id (see keys list)');
      return { action: 'revoke', id: args.id };
    default:
      throw new KeysUsageError(
        args.action ? `unknown keys action "${args.action}"` : 'keys needs an action: create, list or revoke',
      );
  }
}

function time(value: Date | null): string {
  return value ? value.toISOString() : '-';
}

/**
 * `keys create|list|revoke` on an open store. Returns the process exit code.
 * @internal exported for its tests
 */
export async function runKeysCommand(store: Store, args: KeysArgs, output: KeysOutput): Promise<number> {
  const command = keysAction(args);
  switch (command.action) {
    case 'create': {
      const created = await createApiKey(store, command.label);
      output.info(
        `API key ${created.id} created for "${command.label}". It is shown only this once: store it now.`,
      );
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
      const outcome = await revokeKey(store, command.id);
      if (outcome === 'unknown') {
        output.info(`no API key with id ${command.id}`);
        return 1;
      }
      output.info(
        outcome === 'revoked' ? `API key ${command.id} revoked` : `API key ${command.id} was already revoked`,
      );
      return 0;
    }
  }
}

/** A `keys` command run by the process holding the embedded database: its output and exit code. */
interface KeysAnswer {
  code: number;
  lines: { to: 'out' | 'info'; text: string }[];
}

/**
 * `keys` from the command line. On an embedded (PGlite) database that a running process holds (`serve`,
 * `start`...), the command runs in that process, sent through the directory's control socket: never written
 * behind its back (two processes on one PGlite directory lose writes and can damage it), and a key revoked
 * there is refused by that server from its next request.
 */
export async function keysCommand(
  open: () => Promise<Store>,
  args: KeysArgs,
  output: KeysOutput,
): Promise<number> {
  keysAction(args);
  let store: Store;
  try {
    store = await open();
  } catch (err) {
    if (!(err instanceof DatabaseInUseError)) throw err;
    let answer: KeysAnswer;
    try {
      answer = (await askDirectoryHolder(err.directory, { command: 'keys', ...args })) as KeysAnswer;
    } catch (failure) {
      const holder = err.holder ? `process ${err.holder.pid} (${err.holder.command})` : 'the process';
      throw new DatabaseAccessError(
        `${holder} holding ${err.directory} did not run the keys command: ${(failure as Error).message}`,
      );
    }
    for (const line of answer.lines) output[line.to](line.text);
    return answer.code;
  }
  try {
    return await runKeysCommand(store, args, output);
  } finally {
    await store.close();
  }
}

/** What the process holding an embedded database answers to `keys` commands sent through its socket. */
export function keysControlHandler(store: Store): ControlHandler {
  return async (request) => {
    const { command, ...args } = request as KeysArgs & { command?: unknown };
    if (command !== 'keys') throw new Error(`unknown request ${JSON.stringify(command)}`);
    const lines: KeysAnswer['lines'] = [];
    const code = await runKeysCommand(store, args, {
      out: (text) => lines.push({ to: 'out', text }),
      info: (text) => lines.push({ to: 'info', text }),
    });
    return { code, lines } satisfies KeysAnswer;
  };
}
