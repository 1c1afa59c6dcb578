import type { Sql, TransactionSql } from './db.js';

// The raw log keeps each observer message's text in pieces of at most MESSAGE_PIECE_CHARS (migration 022):
// observer_messages.payload holds the first piece, observer_message_pieces the others. This module is the
// one rule for both ways: cutting a text into pieces and writing them, and reading a text back whole.

/**
 * The longest piece, in UTF-16 code units (the JSON of a block is ASCII: as many bytes). Each piece is one
 * statement: on PGlite a statement is one synchronous call on the process's main thread, and the raw-log row
 * of a 39.8 MB block, written whole, took ~3 s (360 ms for 3.9 MB on the loaded 2-core machine,
 * bench finding F-pglite-message-pieces) while /health waited, and its parameter and copies grew the
 * WASM heap (189 -> 391 MB), which never shrinks. A 256 Ki piece took 73-172 ms at load 17; a block of 200 txs
 * (~300 kB) has two pieces.
 * @internal exported for its tests
 */
export const MESSAGE_PIECE_CHARS = 256 * 1024;

/** `text` cut into pieces of at most MESSAGE_PIECE_CHARS, never between the two halves of a surrogate pair. */
export function messagePieces(text: string): string[] {
  if (text.length <= MESSAGE_PIECE_CHARS) return [text];
  const pieces: string[] = [];
  for (let start = 0; start < text.length;) {
    let end = Math.min(text.length, start + MESSAGE_PIECE_CHARS);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--;
    pieces.push(text.slice(start, end));
    start = end;
  }
  return pieces;
}

/**
 * Writes the pieces after the first (the first is the message row's payload) of the message `messageId`,
 * in its transaction, one statement each, each sent once the previous one is done.
 */
export async function writeLaterPieces(
  sql: TransactionSql,
  messageId: number | string,
  pieces: readonly string[],
): Promise<void> {
  for (let number = 1; number < pieces.length; number++) {
    await sql`
      INSERT INTO observer_message_pieces (message_id, piece_number, piece)
      VALUES (${messageId}, ${number}, ${pieces[number]})`;
  }
}

/**
 * Select-list fragment: how many pieces follow a message row's payload (0 for a text held whole), as
 * `later_pieces`, for `readMessageText`. The row's table must be aliased `m`.
 */
export const laterPiecesColumn = (sql: Sql | TransactionSql) =>
  sql.unsafe(
    '(SELECT count(*)::int FROM observer_message_pieces p WHERE p.message_id = m.id) AS later_pieces',
  );

/**
 * A message's whole text: its row's payload (the first piece) and the `laterPieces` that follow it (read by
 * `laterPiecesColumn`), each read by a statement of its own so that none is long.
 */
export async function readMessageText(
  sql: Sql | TransactionSql,
  messageId: number | string,
  firstPiece: string,
  laterPieces: number,
): Promise<string> {
  if (laterPieces === 0) return firstPiece;
  const pieces = [firstPiece];
  for (let number = 1; number <= laterPieces; number++) {
    const [row] = await sql<{ piece: string }[]>`
      SELECT piece FROM observer_message_pieces WHERE message_id = ${messageId} AND piece_number = ${number}`;
    if (!row) throw new Error(`observer message ${messageId}: piece ${number} of ${laterPieces} is missing`);
    pieces.push(row.piece);
  }
  return pieces.join('');
}
