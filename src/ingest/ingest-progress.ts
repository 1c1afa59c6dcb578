/**
 * Whether ingest makes progress: how long the observer's messages have waited without one being taken (answered
 * 200). A node re-sends a message until it is taken, so a message refused or failing again and again (its parent
 * never indexed, a database that keeps failing) or one whose answer never comes (a worker waiting for good) keeps
 * the oldest wait growing; any message taken ends it. Readiness answers 503 past a bound (`INGEST_STALL_SECONDS`).
 */
export class IngestProgress {
  /** when the oldest message not followed by a taken one arrived (ms, performance.now); undefined: none waits */
  private waitingSince: number | undefined;

  /** A message arrived. */
  received(now = performance.now()): void {
    this.waitingSince ??= now;
  }

  /** A message was taken: ingest moves. */
  taken(): void {
    this.waitingSince = undefined;
  }

  /** Seconds the oldest waiting message has waited without any message taken since; 0 when none waits. */
  waitingSeconds(now = performance.now()): number {
    return this.waitingSince === undefined ? 0 : (now - this.waitingSince) / 1000;
  }
}
