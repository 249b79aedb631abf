/**
 * Waits for the handlers still running when a subscription closes, but no longer than
 * `timeoutMs`: a handler that hangs must not hold the close forever (its message is redelivered).
 */
export async function waitForHandlers(running: ReadonlySet<Promise<unknown>>, timeoutMs: number): Promise<void> {
  if (running.size === 0) return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    Promise.allSettled([...running]),
    new Promise((resolve) => (timer = setTimeout(resolve, timeoutMs))),
  ]);
  clearTimeout(timer);
}
