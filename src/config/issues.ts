import type { z } from 'zod';
import type { ConfigProblem } from './config-error.js';
import { quoteValue } from './quote-value.js';

type Issue = z.core.$ZodIssue;
type Path = readonly PropertyKey[];

/** `console.tokens[0].role` */
export function formatPath(path: Path): string {
  let out = '';
  for (const key of path) out += typeof key === 'number' ? `[${key}]` : `${out ? '.' : ''}${String(key)}`;
  return out || '(root)';
}

/** Turns zod's issues into problems that name the key, what is allowed and what was given. */
export function toProblems(
  issues: readonly Issue[],
  schema: z.ZodType,
  input: unknown,
  sources: ReadonlyMap<string, string>,
): ConfigProblem[] {
  return issues.map((issue) => {
    const path = issue.code === 'unrecognized_keys' ? [...issue.path, issue.keys[0]!] : issue.path;
    const dotted = formatPath(path);
    const message = describe(issue, schema, input);
    const traced = originsOf(issue)?.map((key) => [key, setBy(key, sources)] as const);
    // Worth saying only when a variable or flag set one of them; otherwise both are in the file.
    if (traced?.some(([, by]) => by)) {
      const where = traced.map(([key, by]) => `${key} from ${by ?? 'the config file'}`).join('; ');
      return { path: dotted, message: `${message} (${where})` };
    }
    const from = sourceOf(path.map(String), sources);
    return { path: dotted, message, ...(from ? { from } : {}) };
  });
}

/** The variable or flag that set a value at `keys` or at one of its parents (a list, a section). */
function sourceOf(keys: readonly string[], sources: ReadonlyMap<string, string>): string | undefined {
  for (let n = keys.length; n > 0; n--) {
    const from = sources.get(keys.slice(0, n).join('.'));
    if (from) return from;
  }
  return undefined;
}

/** Keys a rule asked to be traced (`params.origins`), e.g. both of `database` and `databases`. */
function originsOf(issue: Issue): string[] | undefined {
  const origins = issue.code === 'custom' ? (issue.params as { origins?: unknown } | undefined)?.origins : undefined;
  return Array.isArray(origins) ? origins.map(String) : undefined;
}

/** The variable or flag that set `key` or anything under it, e.g. SURETY_DATABASE_URL for `database`. */
function setBy(key: string, sources: ReadonlyMap<string, string>): string | undefined {
  return [...sources].find(([path]) => path === key || path.startsWith(`${key}.`))?.[1];
}

function describe(issue: Issue, schema: z.ZodType, input: unknown): string {
  const value = valueAt(input, issue.path);
  const got = shown(issue.path, value);
  switch (issue.code) {
    case 'invalid_value':
      return `must be one of ${issue.values.map(String).join(', ')}${got}`;
    case 'unrecognized_keys': {
      const allowed = keysAt(schema, issue.path);
      const extra = issue.keys.length > 1 ? ` (also ${issue.keys.slice(1).join(', ')})` : '';
      return `unknown key${extra}${allowed ? `; allowed: ${allowed.join(', ')}` : ''}`;
    }
    case 'invalid_type':
      if (value === undefined) return isCustomMessage(issue) ? issue.message : 'is required';
      if (isCustomMessage(issue)) return `${issue.message}${got}`;
      return `must be ${article(issue.expected)}${got}`;
    case 'too_small':
      if (issue.origin === 'string') return `must be at least ${String(issue.minimum)} characters long`;
      if (issue.origin === 'array')
        return isCustomMessage(issue) ? issue.message : `must have at least ${String(issue.minimum)} items`;
      return isCustomMessage(issue)
        ? `${issue.message}${got}`
        : `must be ${issue.inclusive ? 'at least' : 'more than'} ${String(issue.minimum)}${got}`;
    case 'too_big':
      if (issue.origin === 'string') return `must be at most ${String(issue.maximum)} characters long`;
      if (issue.origin === 'array') return `must have at most ${String(issue.maximum)} items`;
      return `must be ${issue.inclusive ? 'at most' : 'less than'} ${String(issue.maximum)}${got}`;
    case 'custom':
      return issue.message;
    case 'not_multiple_of':
      return `must be a whole number${got}`;
    default:
      return `${issue.message}${got}`;
  }
}

/** zod's own messages start with "Invalid input" / "Too small"; ours are lower-case sentences. */
function isCustomMessage(issue: Issue): boolean {
  return /^[a-z]/.test(issue.message);
}

function article(expected: string): string {
  if (expected === 'int') return 'an integer';
  if (expected === 'object') return 'a mapping (object)';
  if (expected === 'array') return 'a list';
  return /^[aeiou]/.test(expected) ? `an ${expected}` : `a ${expected}`;
}

/** Keys whose values, and everything under them, are secrets (or may be, in a misplaced field). */
const SECRET_KEY = /token|sha256|pass(word|wd)?|pwd|secret|credential|api[-_]?key|private[-_]?key/i;

/**
 * ` (got "kafka")`, never showing a secret: nothing under a secret-looking key (`console.tokens`,
 * `sessionSecret`) is shown, and URL passwords are masked.
 */
function shown(path: Path, value: unknown): string {
  if (value === undefined) return '';
  if (path.some((key) => typeof key === 'string' && SECRET_KEY.test(key))) return '';
  if (value !== null && typeof value === 'object') return ` (got ${Array.isArray(value) ? 'a list' : 'a mapping'})`;
  const text = typeof value === 'string' ? quoteValue(value) : String(value);
  return ` (got ${text.length > 80 ? `${text.slice(0, 77)}...` : text})`;
}

function valueAt(input: unknown, path: Path): unknown {
  let node = input;
  for (const key of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<PropertyKey, unknown>)[key];
  }
  return node;
}

interface Def {
  type: string;
  innerType?: { _zod: { def: Def } };
  in?: { _zod: { def: Def } };
  shape?: Record<string, { _zod: { def: Def } }>;
  element?: { _zod: { def: Def } };
  valueType?: { _zod: { def: Def } };
}

/** The keys an object schema at `path` allows, for "unknown key" messages. */
function keysAt(schema: z.ZodType, path: Path): string[] | undefined {
  let def = unwrap((schema as unknown as { _zod: { def: Def } })._zod.def);
  for (const key of path) {
    if (def.type === 'object' && def.shape && typeof key === 'string' && def.shape[key])
      def = unwrap(def.shape[key]._zod.def);
    else if (def.type === 'array' && def.element && typeof key === 'number') def = unwrap(def.element._zod.def);
    else if (def.type === 'record' && def.valueType && typeof key === 'string') def = unwrap(def.valueType._zod.def);
    else return undefined;
  }
  return def.type === 'object' && def.shape ? Object.keys(def.shape) : undefined;
}

function unwrap(def: Def): Def {
  for (;;) {
    if (def.innerType) def = def.innerType._zod.def;
    else if (def.type === 'pipe' && def.in) def = def.in._zod.def;
    else return def;
  }
}
