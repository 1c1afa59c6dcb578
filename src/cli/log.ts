import pino, { type Logger } from 'pino';
import { prettyFactory } from 'pino-pretty';
import type { Config } from '../config.js';
import { logDestination } from './progress.js';

// The service's logger: pino on stdout (above the progress bar while one is drawn: cli/progress.ts). JSON
// lines for machines (a log collector, a file, a pipe); one readable line per entry for a person at a
// terminal (LOG_FORMAT=auto, the default, tells them apart by whether stdout is a terminal).

export function createLogger(config: Pick<Config, 'LOG_LEVEL' | 'LOG_FORMAT'>): Logger {
  const pretty = config.LOG_FORMAT === 'pretty' || (config.LOG_FORMAT === 'auto' && process.stdout.isTTY);
  return pino(
    { level: config.LOG_LEVEL, base: { service: 'stacks-read-api' } },
    pretty ? prettyDestination() : logDestination,
  );
}

/** Each JSON line made readable, then written where JSON lines go. */
function prettyDestination() {
  const format = prettyFactory({
    singleLine: true,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,service',
    colorize: process.stdout.isTTY === true,
  });
  return { write: (line: string) => logDestination.write(format(line)) };
}
