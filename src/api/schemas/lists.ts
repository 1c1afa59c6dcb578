import Type, { type TSchema } from 'typebox';
import { LimitQuery, MAX_INT, OffsetQuery } from './params.js';

// The lists beyond the ten: their page sizes (docs/upstream.md C.0) and the two envelopes the original wraps a
// page in, `{limit, offset, total, results}` and, for the lists it pages by cursor too, the same with
// `next_cursor`, `prev_cursor` and `cursor` before `results`.

/**
 * Default and largest `limit` per kind of list (upstream's; above the largest: a 400). An address
 * transaction's events are paged as transactions are.
 */
export const PAGE_SIZES = {
  block: { fallback: 20, max: 30 },
  transaction: { fallback: 20, max: 50 },
  nftHolding: { fallback: 50, max: 200 },
  ftBalance: { fallback: 100, max: 200 },
} as const;

/** `limit` and `offset` of a list of `kind`, its items named `what` in the descriptions. */
export const pageQuery = (kind: keyof typeof PAGE_SIZES, what: string) => ({
  limit: LimitQuery(PAGE_SIZES[kind].max, PAGE_SIZES[kind].fallback, `${what} per page`),
  offset: OffsetQuery(MAX_INT, `Index of the first of the ${what.toLowerCase()} returned`),
});

const pageFields = {
  limit: Type.Integer({ description: 'The page size used' }),
  offset: Type.Integer({ description: 'Index of the page’s first item' }),
  total: Type.Integer({
    description: 'Items in the whole list (most lists say 0 on a page at or past their end)',
  }),
};

/** `{limit, offset, total, results}`. */
export const Page = <T extends TSchema>(item: T, options: { title: string; description: string }) =>
  Type.Object({ ...pageFields, results: Type.Array(item) }, options);

/** `{limit, offset, total, next_cursor, prev_cursor, cursor, results}`: null cursors on an empty page. */
export const CursorPage = <T extends TSchema>(
  item: T,
  options: { title: string; description: string },
  cursors: { next: string; prev: string; cursor: string },
) =>
  Type.Object(
    {
      ...pageFields,
      next_cursor: Type.Union([Type.String(), Type.Null()], { description: cursors.next }),
      prev_cursor: Type.Union([Type.String(), Type.Null()], { description: cursors.prev }),
      cursor: Type.Union([Type.String(), Type.Null()], { description: cursors.cursor }),
      results: Type.Array(item),
    },
    options,
  );
