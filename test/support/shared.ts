import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** `../shared` beside the checkout: the recorded chains and the original API's answers. */
const sharedDir = fileURLToPath(new URL('../../../shared/', import.meta.url));
const eventReplayDir = `${sharedDir}fixtures/event-replay/`;
export const syntheticTxsDir = `${sharedDir}fixtures/synthetic-txs/`;
export const goldenDir = `${sharedDir}golden/`;

export function fixtureNames(): string[] {
  return readdirSync(eventReplayDir)
    .filter((f) => f.endsWith('.tsv'))
    .map((f) => f.replace(/\.tsv$/, ''))
    .sort();
}

export function fixtureFile(name: string): string {
  return `${eventReplayDir}${name}.tsv`;
}

/** The chain the reference imported each fixture with (golden/README.md). */
export function fixtureIsMainnet(name: string): boolean {
  return name.startsWith('mainnet-') || name === 'poisonmicroblock';
}
