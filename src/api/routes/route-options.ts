import type { Store } from '../../store/store.js';

/** What every route plugin receives (its own file, so the plugins and index.ts, which registers them, import no loop). */
export interface RouteOptions {
  store: Store;
}
