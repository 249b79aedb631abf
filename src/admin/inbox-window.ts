import type { InboxStore } from '../ports/consumer-store.js';

/** Readable duration for warnings: `90 s`, `15 min`, `36 h`, `7 d`. */
export function formatDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 120) return `${s} s`;
  if (s < 7_200) return `${Math.round(s / 60)} min`;
  if (s < 172_800) return `${Math.round(s / 3_600)} h`;
  return `${Math.round(s / 86_400)} d`;
}

/**
 * The inbox only remembers a message for the inbox window (its retention); past it, a message that
 * was handled looks new again. Warns when a replay may therefore run the handler a second time.
 */
export async function replayWindowWarnings(
  store: Pick<InboxStore, 'inboxRecordedAt'>,
  windowMs: number | undefined,
  row: { messageId: string; group: string; createdAt: number },
  now: number,
): Promise<string[]> {
  if (windowMs === undefined) return [];
  const window = formatDuration(windowMs);
  const recordedAt = await store.inboxRecordedAt(row.messageId, row.group);
  if (recordedAt !== undefined) {
    return now - recordedAt > windowMs
      ? [
          `the inbox record of group "${row.group}" is older than the inbox window (${window}) and may be purged: the handler may run again`,
        ]
      : [];
  }
  return now - row.createdAt > windowMs
    ? [
        `the message is older than the inbox window (${window}) and group "${row.group}" holds no inbox record of it: if it was handled before, the handler may run again`,
      ]
    : [];
}

/** A resend publishes again; consumers whose inbox forgot the message (older than the window) handle it again. */
export function resendWindowWarnings(windowMs: number | undefined, createdAt: number, now: number): string[] {
  if (windowMs === undefined || now - createdAt <= windowMs) return [];
  return [
    `the message is older than the inbox window (${formatDuration(windowMs)}): consumers whose inbox no longer holds it will run their handler again`,
  ];
}

/** A bulk job over rows that may be older than the window. */
export function jobWindowWarnings(windowMs: number | undefined, from: number | undefined, now: number): string[] {
  if (windowMs === undefined || (from !== undefined && now - from <= windowMs)) return [];
  return [
    `the filter may match messages older than the inbox window (${formatDuration(windowMs)}): their handler may run again`,
  ];
}
