import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** Runs a TypeScript file under tsx in a child process. */
export function spawnTs(relativeToTest: string, env: Record<string, string>, args: string[] = []): ChildProcess {
  const file = fileURLToPath(new URL(`../${relativeToTest}`, import.meta.url));
  return spawn(process.execPath, ['--import', 'tsx', file, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Resolves with the exit code and signal once the child has exited. */
export function exited(
  child: ChildProcess,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string; stdout: string }> {
  let stderr = '';
  let stdout = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null)
      resolve({ code: child.exitCode, signal: child.signalCode, stderr, stdout });
    else child.once('close', (code, signal) => resolve({ code, signal, stderr, stdout })); // after stdout and stderr are read to the end
  });
}
