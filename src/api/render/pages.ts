// The page envelope of the lists beyond the ten (schemas/lists.ts `Page`): the page asked, the list's size,
// its items.

export const pageOf = <T>(asked: { limit: number; offset: number }, total: number, results: T[]) => ({
  limit: asked.limit,
  offset: asked.offset,
  total,
  results,
});
