import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { dirname } from 'node:path';

// Checks of the CLI's file arguments, made before any command opens the database or starts work.

/** A command-line argument that cannot work: printed as one line with a hint to the command's help. */
export class UsageError extends Error {}

/** `option` names a file this process can read. */
export async function checkInputFile(option: string, file: string): Promise<void> {
  let info;
  try {
    info = await stat(file);
  } catch (err) {
    throw new UsageError(`${option} ${file}: ${fileProblem(err)}`);
  }
  if (!info.isFile()) throw new UsageError(`${option} ${file}: not a file`);
  try {
    await access(file, constants.R_OK);
  } catch {
    throw new UsageError(`${option} ${file}: not readable by this user`);
  }
}

/** `option` names a file this process can create or overwrite (its directory exists and is writable). */
export async function checkOutputFile(option: string, file: string): Promise<void> {
  const existing = await stat(file).catch(() => undefined);
  if (existing?.isDirectory()) throw new UsageError(`${option} ${file}: is a directory`);
  const directory = dirname(file);
  let info;
  try {
    info = await stat(directory);
  } catch (err) {
    throw new UsageError(`${option} ${file}: directory ${directory}: ${fileProblem(err)}`);
  }
  if (!info.isDirectory()) throw new UsageError(`${option} ${file}: ${directory} is not a directory`);
  try {
    await access(existing ? file : directory, constants.W_OK);
  } catch {
    throw new UsageError(`${option} ${file}: not writable by this user`);
  }
}

function fileProblem(err: unknown): string {
  switch ((err as NodeJS.ErrnoException).code) {
    case 'ENOENT':
      return 'no such file or directory';
    case 'EACCES':
      return 'permission denied';
    case 'ENOTDIR':
      return 'a part of the path is not a directory';
    default:
      return (err as Error).message;
  }
}
