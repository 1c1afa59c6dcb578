// Where we answer differently from the original API on purpose (NOTES-upstream preface: its bugs we fix).
// Each entry names the golden paths it covers and what we answer instead; the conformance harness checks
// that we do answer that (status, and the body predicate), instead of comparing with the golden record.

export interface DeliberateDifference {
  /** matched against the golden record's path (with query string) */
  path: RegExp;
  /** optional: only golden records with this status */
  goldenStatus?: number;
  /** optional: only golden records whose body passes this test */
  goldenBody?: (body: unknown) => boolean;
  /** what upstream does, in a few words */
  upstream: string;
  /** what we answer instead */
  ours: string;
  expectStatus: number;
  /** extra check on our body; returns an explanation when it fails */
  expectBody?: (body: unknown, golden: { status: number; body: unknown }) => string | null;
}

const errorMessage = (body: unknown) => (body as { message?: unknown })?.message;

export const deliberateDifferences: DeliberateDifference[] = [
  {
    path: /^\/extended\/v2\/blocks\/-\d+$/,
    upstream: 'a negative height passes validation and the handler fails: 500 "Invalid block height or hash"',
    ours: '400 with a message saying a height is an integer >= 0',
    expectStatus: 400,
    expectBody: (body) =>
      typeof errorMessage(body) === 'string' && /integer >= 0/.test(errorMessage(body) as string)
        ? null
        : `expected a 400 message about the height, got ${JSON.stringify(body)}`,
  },
  {
    path: /^\/extended\/v1\/tx\/multiple\?/,
    goldenStatus: 200,
    goldenBody: (body) =>
      Object.values(body as Record<string, { found: boolean }>).every((entry) => !entry.found),
    upstream: 'when none of the ids is found: 200 with every entry {found: false}',
    ours: '404 "could not find any of the transactions by ID", as contract 4.4 says',
    expectStatus: 404,
    expectBody: (body) =>
      errorMessage(body) === 'could not find any of the transactions by ID'
        ? null
        : `expected the 404 of contract 4.4, got ${JSON.stringify(body)}`,
  },
];

export function findDeliberateDifference(golden: {
  path: string;
  status: number;
  body: unknown;
}): DeliberateDifference | undefined {
  return deliberateDifferences.find(
    (d) =>
      d.path.test(golden.path) &&
      (d.goldenStatus === undefined || d.goldenStatus === golden.status) &&
      (d.goldenBody === undefined || d.goldenBody(golden.body)),
  );
}
