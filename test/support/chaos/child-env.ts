/** A required environment variable of a chaos child process. */
export function childEnv(name: string): string {
  const value = process.env[name];
  if (value === undefined) throw new Error(`${name} is required`);
  return value;
}
