// Times as the original API writes them.

export function isoTime(unixSeconds: number): string {
  return new Date(unixSeconds * 1000).toISOString();
}

/** Upstream renders times ≤ 0 (unknown) as an empty ISO string. */
export function isoTimeOrEmpty(unixSeconds: number): string {
  return unixSeconds > 0 ? isoTime(unixSeconds) : '';
}
