import { MultiBar, SingleBar, type GenericBar } from 'cli-progress';
import type { ReplayProgress } from '../ingest/replay.js';

// Progress bars on stderr (generate, replay, the demo chain), through cli-progress.
// - On a terminal the bar is redrawn in place, and log lines written meanwhile (the CLI's logger writes
//   through `logDestination`) are printed above it: the bar is cleared, the line written, the bar redrawn.
// - When stderr is not a terminal (a log file, CI), nothing is redrawn: a plain line every few seconds
//   and a last one at the end.

/** How often a bar writes its plain line when stderr is not a terminal. */
const PLAIN_LINE_EVERY_MS = 5_000;

const TERMINAL_FORMAT = '{label} [{bar}] {percentage}% {detail}';
const PLAIN_FORMAT = '{label}: {percentage}% {detail}';

export interface Progress {
  /** `value` out of the total the bar was started with; `detail` follows the percentage. */
  update(value: number, detail: string): void;
  /** Draws the last state (at 100% when `complete`) and leaves the bar's line behind. */
  stop(options?: { complete?: boolean }): void;
}

/** The bar drawn on the terminal right now, which log lines step around. */
let drawing: MultiBar | undefined;

/**
 * Where the CLI's log lines go: stdout, or above the bar while one is drawn on the terminal that stdout
 * also writes to. (A bar on a terminal with stdout piped elsewhere is left alone: the lines never meet.)
 */
export const logDestination = {
  write(line: string): void {
    if (drawing) drawing.log(line);
    else process.stdout.write(line);
  },
};

function startProgress(label: string, total: number, stream: NodeJS.WriteStream = process.stderr): Progress {
  const options = {
    format: stream.isTTY ? TERMINAL_FORMAT : PLAIN_FORMAT,
    stream,
    barsize: 30,
    hideCursor: false,
    // the bar is cut to the terminal's width and wrapping stays on: cli-progress's default turns wrapping
    // off while a bar runs, which cuts the log lines printed above it (and leaves it off if the process
    // dies meanwhile)
    linewrap: true,
    // the label and detail change on every update: a redraw at most every 200 ms
    fps: 5,
    noTTYOutput: true,
    notTTYSchedule: PLAIN_LINE_EVERY_MS,
  };
  const barTotal = Math.max(total, 1);
  const payload = { label, detail: '' };
  let bar: GenericBar;
  let stopBar: () => void;
  if (stream.isTTY) {
    const multi = new MultiBar({ ...options, clearOnComplete: false });
    bar = multi.create(barTotal, 0, payload);
    const sharesTerminalWithLogs = process.stdout.isTTY === true;
    if (sharesTerminalWithLogs) drawing = multi;
    stopBar = () => {
      multi.update(); // flushes the log lines still waiting
      multi.stop();
      if (drawing === multi) drawing = undefined;
    };
  } else {
    // clearOnComplete: the last plain line is not followed by an empty one
    const single = new SingleBar({ ...options, clearOnComplete: true });
    single.start(barTotal, 0, payload);
    bar = single;
    stopBar = () => single.stop();
  }
  return {
    update(value, detail) {
      bar.update(Math.min(value, barTotal), { detail });
    },
    stop({ complete = false } = {}) {
      if (complete) bar.update(barTotal);
      stopBar();
    },
  };
}

const perSecond = (count: number, seconds: number) => (seconds > 0 ? count / seconds : 0);

/**
 * The bar of a chain being generated: blocks made of the tip height asked for, txs, txs/s. While it runs
 * it counts the txs of the blocks written; a fork's txs mined again count twice there and microblock txs
 * not at all, so the last line shows the report's count of canonical txs, the one logged after it.
 */
export function generationProgress(label: string, totalBlocks: number) {
  const bar = startProgress(label, totalBlocks);
  const started = performance.now();
  const show = (height: number, txs: number) => {
    const rate = perSecond(txs, (performance.now() - started) / 1000);
    bar.update(height, `height ${height}, ${txs} txs, ${rate.toFixed(0)} txs/s`);
  };
  return {
    onProgress: (progress: { height: number; txs: number }) => show(progress.height, progress.txs),
    /** `report`: the chain was generated in full (else the bar stays where generation stopped) */
    stop(report?: { tipHeight: number; canonicalTxs: number }) {
      if (report) show(report.tipHeight, report.canonicalTxs);
      bar.stop({ complete: report !== undefined });
    },
  };
}

/** The bar of a replay: the part of the file applied, messages, blocks, blocks/s. */
export function replayProgress(label: string) {
  let bar: Progress | undefined;
  return {
    onProgress({ bytesRead, totalBytes, stats }: ReplayProgress) {
      bar ??= startProgress(label, totalBytes);
      const rate = perSecond(stats.blocks, stats.seconds);
      bar.update(bytesRead, `${stats.messages} msgs, ${stats.blocks} blocks, ${rate.toFixed(1)} blocks/s`);
    },
    /** `complete`: the whole file was applied (else the bar stays where the replay stopped) */
    stop: (complete: boolean) => bar?.stop({ complete }),
  };
}
