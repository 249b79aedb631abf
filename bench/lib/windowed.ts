/**
 * Sends `total` messages in batches of `size` with at most `depth` batches unconfirmed at once: the
 * raw contenders' way to keep a client at its confirm ceiling. `send` resolves once the broker
 * confirmed its batch; resolves with the count confirmed.
 */
export async function sendWindowed(
  total: number,
  size: number,
  depth: number,
  send: (first: number, count: number) => Promise<void>,
): Promise<number> {
  let next = 0;
  let confirmed = 0;
  const lane = async () => {
    while (next < total) {
      const first = next;
      const count = Math.min(size, total - first);
      next += count;
      await send(first, count);
      confirmed += count;
    }
  };
  await Promise.all(Array.from({ length: depth }, lane));
  return confirmed;
}
