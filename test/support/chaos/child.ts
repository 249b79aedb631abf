import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { exited, spawnTs } from '../spawn.js';

/** A chaos child process (relay or consumer) that can be SIGKILLed and started again. */
export class ChaosChild {
  private child: ChildProcess | undefined;
  private ended: ReturnType<typeof exited> | undefined;
  kills = 0;

  constructor(
    private readonly script: string,
    private readonly env: Record<string, string>,
  ) {}

  /** Starts it and resolves once it printed "ready"; rejects with its stderr if it exits first. */
  async start(timeoutMs = 60_000): Promise<void> {
    const child = spawnTs(`support/chaos/${this.script}`, this.env);
    this.child = child;
    this.ended = exited(child);
    const lines = createInterface({ input: child.stdout! });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${this.script} not ready after ${timeoutMs} ms`)), timeoutMs);
      lines.on('line', (line) => {
        if (line !== 'ready') return;
        clearTimeout(timer);
        resolve();
      });
      void this.ended!.then(({ code, signal, stderr }) => {
        clearTimeout(timer);
        reject(new Error(`${this.script} exited (${code ?? signal}) before it was ready: ${stderr.slice(-2_000)}`));
      });
    });
  }

  /** SIGKILL: no shutdown hook runs, whatever it held in memory is gone. */
  async kill(): Promise<void> {
    if (!this.child) return;
    this.child.kill('SIGKILL');
    await this.ended;
    this.kills++;
    this.child = undefined;
  }

  /** SIGTERM, then SIGKILL if it has not exited within `graceMs`. */
  async stop(graceMs = 20_000): Promise<void> {
    if (!this.child) return;
    const child = this.child;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await this.ended;
    clearTimeout(timer);
    this.child = undefined;
  }
}
