import { SingleBar, Presets } from 'cli-progress';
import type { CliIo } from '../io.js';

export interface Progress {
  update(done: number, total: number, changed: number): void;
  stop(): void;
}

/**
 * A progress bar on an interactive terminal; plain lines otherwise (logs, CI, pipes), at most one
 * a second and one at the end.
 */
export function createProgress(io: CliIo, label: string): Progress {
  if (io.isTTY) {
    const bar = new SingleBar(
      {
        format: `${label} [{bar}] {percentage}% | {value}/{total} rows | {changed} changed | eta {eta_formatted}`,
        stream: io.err as NodeJS.WritableStream,
        hideCursor: true,
      },
      Presets.shades_classic,
    );
    let started = false;
    return {
      update(done, total, changed) {
        if (!started) {
          bar.start(total, done, { changed });
          started = true;
        } else {
          bar.setTotal(total);
          bar.update(done, { changed });
        }
      },
      stop: () => started && bar.stop(),
    };
  }
  let last = 0;
  let lastDone = -1;
  return {
    update(done, total, changed) {
      const now = Date.now();
      if (done === lastDone || (now - last < 1_000 && done < total)) return;
      last = now;
      lastDone = done;
      io.err.write(`${label}: ${done}/${total} rows, ${changed} changed\n`);
    },
    stop() {},
  };
}
