/** What an action hands back to `main`: its exit code when it differs from 0. */
export interface CommandState {
  exitCode: number;
}
