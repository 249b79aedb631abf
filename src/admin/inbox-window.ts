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

/**
 * How close to the end of the inbox window a bulk job's row counts as past it: a job works at its
 * rate, and the replayer after it at its own, so a row a little younger than the window may be
 * past it by the time its handler runs.
 */
export const JOB_WINDOW_MARGIN = 0.1;

/** Rows created before this time may be past the inbox window when a bulk job reaches them. */
export function jobWindowCutoff(windowMs: number, now: number): number {
  return now - Math.floor(windowMs * (1 - JOB_WINDOW_MARGIN));
}

/** A bulk job of which some matching row is that old (see {@link jobWindowCutoff}). */
export function jobWindowWarnings(windowMs: number): string[] {
  return [
    `some matching messages are older than the inbox window (${formatDuration(windowMs)}), or nearly: if they were handled before, their handler may run again`,
  ];
}
