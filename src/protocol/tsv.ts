import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createInterface } from 'node:readline';

// The event-replay TSV: PostgreSQL `COPY ... TO` text format of the raw message log, four tab-separated
// columns: id, receive timestamp, event path, JSON payload. Backslash, tab and newline inside the payload
// are backslash-escaped. Some dumps hold raw JSON instead (ISO timestamps, no escaping); both are read.

/** A line of a TSV file that is not a recorded message (the file is not an event-replay TSV, or is cut). */
export class TsvFormatError extends Error {}

export interface RecordedMessage {
  id: string;
  receivedAt: Date;
  path: string;
  payload: string;
}

const COPY_ESCAPES: Record<string, string> = {
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  '\\': '\\',
};

/**
 * Undoes COPY text-format escaping.
 * @internal exported for its tests
 */
export function copyUnescape(field: string): string {
  if (!field.includes('\\')) return field;
  let out = '';
  let i = 0;
  while (i < field.length) {
    const c = field[i];
    if (c !== '\\' || i + 1 >= field.length) {
      out += c;
      i++;
      continue;
    }
    const next = field[i + 1];
    if (next >= '0' && next <= '7') {
      const octal = /^[0-7]{1,3}/.exec(field.slice(i + 1, i + 4))![0];
      out += String.fromCharCode(parseInt(octal, 8));
      i += 1 + octal.length;
    } else if (next === 'x' && /^[0-9a-fA-F]/.test(field[i + 2] ?? '')) {
      const hex = /^[0-9a-fA-F]{1,2}/.exec(field.slice(i + 2, i + 4))![0];
      out += String.fromCharCode(parseInt(hex, 16));
      i += 2 + hex.length;
    } else {
      out += COPY_ESCAPES[next] ?? next;
      i += 2;
    }
  }
  return out;
}

/**
 * Applies COPY text-format escaping.
 * @internal exported for its tests
 */
export function copyEscape(field: string): string {
  return field.replace(/[\\\t\n\r\b\f\v]/g, (c) => {
    switch (c) {
      case '\\':
        return '\\\\';
      case '\t':
        return '\\t';
      case '\n':
        return '\\n';
      case '\r':
        return '\\r';
      case '\b':
        return '\\b';
      case '\f':
        return '\\f';
      default:
        return '\\v';
    }
  });
}

/** COPY renders timestamptz as `2022-10-05 16:20:34.244945+00`; raw dumps use ISO 8601. */
function parseTimestamp(text: string): Date {
  const iso = text.includes('T') ? text : text.replace(' ', 'T').replace(/([+-]\d\d)$/, '$1:00');
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) throw new TsvFormatError(`unreadable timestamp "${text}"`);
  return date;
}

/** @internal exported for its tests and the tests' fixture reader */
export function parseTsvLine(line: string, lineNumber: number): RecordedMessage {
  const first = line.indexOf('\t');
  const second = line.indexOf('\t', first + 1);
  const third = line.indexOf('\t', second + 1);
  if (first < 0 || second < 0 || third < 0) {
    throw new TsvFormatError(
      `line ${lineNumber}: expected 4 tab-separated columns (id, timestamp, path, payload)`,
    );
  }
  const timestamp = line.slice(first + 1, second);
  const rawJson = timestamp.includes('T');
  const payload = line.slice(third + 1);
  let receivedAt: Date;
  try {
    receivedAt = parseTimestamp(timestamp);
  } catch (err) {
    throw new TsvFormatError(`line ${lineNumber}: ${(err as Error).message}`);
  }
  return {
    id: line.slice(0, first),
    receivedAt,
    path: line.slice(second + 1, third),
    payload: rawJson ? payload : copyUnescape(payload),
  };
}

/** Streams the messages of a TSV file, with the bytes of the file read up to the end of each (for progress). */
export async function* readTsv(file: string): AsyncGenerator<RecordedMessage & { bytesRead: number }> {
  const stream = createReadStream(file, { encoding: 'utf8', highWaterMark: 1 << 20 });
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  let lineNumber = 0;
  // counted line by line: the stream's own count runs a whole 1 MiB chunk ahead (all of a small file)
  let bytesRead = 0;
  for await (const line of lines) {
    lineNumber++;
    bytesRead += Buffer.byteLength(line, 'utf8') + 1;
    if (line.length === 0) continue;
    yield { ...parseTsvLine(line, lineNumber), bytesRead };
  }
}

export async function fileSize(file: string): Promise<number> {
  return (await stat(file)).size;
}

/** One line of an export, in the format `readTsv` reads back. */
export function formatTsvLine(message: RecordedMessage): string {
  const ts = message.receivedAt.toISOString().replace('T', ' ').replace('Z', '000+00');
  return `${message.id}\t${ts}\t${message.path}\t${copyEscape(message.payload)}\n`;
}
