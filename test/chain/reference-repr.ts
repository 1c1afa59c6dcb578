import type { ClarityValue } from '@stacks/transactions';

// An independent printer of the original API's Clarity repr over @stacks/transactions' decoder. It differs
// from the library's `cvToString` in exactly the ways ../shared/NOTES-stack.md documents (and the goldens
// show), and nowhere else (the decoder test checks `cvToString` on every value without these parts):
// 1. principals are quoted: `'SP….name` (cvToString: `SP….name`);
// 2. string-ascii is escaped like Rust's `escape_default` (\t \r \n \\ \' \" and \xNN for other non-printables);
// 3. string-utf8 escapes each non-ASCII character as `\u{<its UTF-8 bytes in hex>}`, ASCII as in rule 2.

export function referenceRepr(cv: ClarityValue): string {
  const esc = (b: number): string => {
    if (b === 9) return '\\t';
    if (b === 13) return '\\r';
    if (b === 10) return '\\n';
    if (b === 0x5c || b === 0x27 || b === 0x22) return '\\' + String.fromCharCode(b);
    if (b >= 0x20 && b <= 0x7e) return String.fromCharCode(b);
    return '\\x' + b.toString(16).padStart(2, '0');
  };
  switch (cv.type) {
    case 'int':
      return BigInt(cv.value).toString();
    case 'uint':
      return 'u' + BigInt(cv.value).toString();
    case 'true':
    case 'false':
      return cv.type;
    case 'buffer':
      return '0x' + cv.value;
    case 'address':
    case 'contract':
      return "'" + cv.value;
    case 'none':
      return 'none';
    case 'some':
      return `(some ${referenceRepr(cv.value)})`;
    case 'ok':
      return `(ok ${referenceRepr(cv.value)})`;
    case 'err':
      return `(err ${referenceRepr(cv.value)})`;
    case 'list':
      return '(list' + cv.value.map((v) => ' ' + referenceRepr(v)).join('') + ')';
    case 'tuple':
      return (
        '(tuple' +
        Object.keys(cv.value)
          .sort()
          .map((k) => ` (${k} ${referenceRepr(cv.value[k])})`)
          .join('') +
        ')'
      );
    case 'ascii':
      return '"' + [...Buffer.from(cv.value, 'latin1')].map(esc).join('') + '"';
    case 'utf8':
      return (
        'u"' +
        [...cv.value]
          .map((ch) => {
            const bytes = Buffer.from(ch, 'utf8');
            return bytes.length > 1 ? `\\u{${bytes.toString('hex')}}` : esc(bytes[0]);
          })
          .join('') +
        '"'
      );
    default:
      throw new Error(`unexpected Clarity value ${JSON.stringify(cv)}`);
  }
}
