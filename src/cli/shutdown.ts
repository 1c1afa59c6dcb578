import type { Logger } from 'pino';

// Stopping a server command on SIGTERM or SIGINT, however the process was started.
//
// - The command's start-up runs under `Shutdown.starting`: a signal during it (opening the database,
//   indexing the demo chain) aborts `signal`, which the start-up checks between steps; it then closes what
//   it opened and the process exits 0.
// - Once started, the command registers its stop steps (`onStop`); a signal runs them in reverse order of
//   registration, then the process exits 0 (1 when a step fails).
// - One signal can arrive twice. A Ctrl-C in a terminal goes to every process of the foreground group,
//   and npm (`npm start`, `npm run`, `npx`) forwards SIGINT and SIGTERM to its child as well: a server
//   started by npm gets each Ctrl-C twice (measured: npm's copy 10-25 ms after the terminal's, on the
//   loaded 2-core machine). A signal within DUPLICATE_WINDOW_MS of the first is that copy; one after it
//   is a second request, and forces the exit (code 1) of a stop that hangs.
// - npm runs its scripts with `sh -c`, and dash (Debian's sh) does not exec a lone command: npm's SIGTERM
//   would kill the shell and leave the server running. The scripts say `exec`. The tsx CLI (`tsx file.ts`)
//   is another such parent: it sends a signal again when its child has not acknowledged it within 30 ms,
//   and kills the child with SIGKILL when it still has not 30 ms later; `npm run dev` runs
//   `node --import tsx` instead, with nothing between.

/** Signals this close to the first are copies of it (see above). */
const DUPLICATE_WINDOW_MS = 1_000;

const SIGNALS = ['SIGTERM', 'SIGINT'] as const;

export interface ShutdownOptions {
  /** ends the process (tests pass their own) */
  exit?: (code: number) => void;
  /** milliseconds, monotonic (tests pass their own clock) */
  now?: () => number;
}

export class Shutdown {
  private readonly controller = new AbortController();
  private readonly steps: { what: string; stop: () => Promise<void> }[] = [];
  /** Settles with the start-up: true when it finished or stopped on request, false when it failed. */
  private started: Promise<boolean> = Promise.resolve(true);
  private firstSignalAt: number | undefined;
  private readonly exit: (code: number) => void;
  private readonly now: () => number;

  constructor(
    private readonly logger: Logger,
    options: ShutdownOptions = {},
  ) {
    this.exit = options.exit ?? ((code) => process.exit(code));
    this.now = options.now ?? (() => performance.now());
  }

  /** Aborted once a stop is asked for: what starts checks it between steps. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /**
   * Runs the start-up `work`. Resolves when it finished, or when it stopped because a signal asked it to
   * (it threw `signal.reason`); any other failure is rethrown.
   */
  async starting(work: () => Promise<void>): Promise<void> {
    const stoppedOnRequest = (err: unknown) => this.signal.aborted && err === this.signal.reason;
    const running = work();
    this.started = running.then(
      () => true,
      (err: unknown) => stoppedOnRequest(err),
    );
    try {
      await running;
    } catch (err) {
      if (!stoppedOnRequest(err)) throw err;
    }
  }

  /** Registers a step run at stop (the last registered runs first). */
  onStop(what: string, stop: () => Promise<void>): void {
    this.steps.push({ what, stop });
  }

  /** Handles a signal: the first stops gracefully, a copy of it is ignored, a later one forces the exit. */
  receive(signal: NodeJS.Signals): void {
    const now = this.now();
    if (this.firstSignalAt === undefined) {
      this.firstSignalAt = now;
      this.logger.info({ signal }, 'shutting down: finishing in-flight requests and messages');
      this.controller.abort(new StopRequested(signal));
      void this.stop();
      return;
    }
    if (now - this.firstSignalAt < DUPLICATE_WINDOW_MS) {
      this.logger.debug(
        { signal, ms: Math.round(now - this.firstSignalAt) },
        'signal repeated by the process group or npm: already stopping',
      );
      return;
    }
    this.logger.warn({ signal }, 'second signal: exiting now');
    this.exit(1);
  }

  private async stop(): Promise<void> {
    // a start-up that failed is reported by the command line, with its exit code
    if (!(await this.started)) return;
    for (const step of [...this.steps].reverse()) {
      try {
        await step.stop();
      } catch (err) {
        this.logger.error({ err }, `shutdown failed: stopping ${step.what}`);
        this.exit(1);
        return;
      }
    }
    this.logger.info('stopped');
    this.exit(0);
  }
}

/** The reason `Shutdown.signal` is aborted with: the signal that asked for the stop. */
class StopRequested extends Error {
  constructor(readonly signal: NodeJS.Signals) {
    super(`stopped by ${signal}`);
  }
}

/** A Shutdown driven by this process's SIGTERM and SIGINT, from now on. */
export function stopOnSignals(logger: Logger, options: ShutdownOptions = {}): Shutdown {
  const shutdown = new Shutdown(logger, options);
  for (const signal of SIGNALS) process.on(signal, (received) => shutdown.receive(received));
  return shutdown;
}
