/** One schema version: statements applied once, in order. */
export interface Migration {
  readonly id: number;
  readonly name: string;
  readonly up: readonly string[];
}
