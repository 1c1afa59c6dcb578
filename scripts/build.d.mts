// The types of build.mjs's exports, for the TypeScript that imports it (the tests).

/** Why dist/ under `checkout` (default: this checkout) must be built, or null when it is current. */
export function staleness(checkout?: string): string | null;

/** Builds (`ifNeeded`: only a missing or stale dist/); a build that cannot be made is one line and exit 2. */
export function buildOrExit(options: { ifNeeded: boolean }): void;
