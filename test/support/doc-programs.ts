import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/** A fenced TypeScript block of a Markdown page that imports something: a complete program, run as written. */
export interface DocProgram {
  /** `README.md#producer.ts`: the page and the file name the block's first comment gives, else its position. */
  readonly name: string;
  readonly page: string;
  /** The line of the page where the block starts (1-based). */
  readonly line: number;
  readonly code: string;
}

const FENCE = /^(\s*)```(\w+)?[^\n]*$/;
const PROGRAM_LANGS = new Set(['ts', 'typescript', 'js', 'javascript', 'mjs']);
const NAMED = /^\/\/\s*([\w.-]+\.(?:ts|mjs|js)):/;
/** A block named as a test file is run by its test runner, not as a program (see test/docs/testing-examples.test.ts). */
const TEST_FILE = /\.test\.(?:ts|mjs|js)$/;

/**
 * The complete programs of `pages` (paths relative to `root`). A block is one when it has an `import` statement;
 * fragments (no import) are shown in context and not run. Indented blocks (in a list) are dedented.
 */
export function docPrograms(root: string, pages: readonly string[]): DocProgram[] {
  return docBlocks(root, pages).filter((p) => !TEST_FILE.test(p.name));
}

/** The test files of `pages`: blocks like programs, whose first comment names them `*.test.ts` (or `.mjs`, `.js`). */
export function docTestFiles(root: string, pages: readonly string[]): DocProgram[] {
  return docBlocks(root, pages).filter((p) => TEST_FILE.test(p.name));
}

function docBlocks(root: string, pages: readonly string[]): DocProgram[] {
  const programs: DocProgram[] = [];
  for (const page of pages) {
    const lines = readFileSync(join(root, page), 'utf8').split('\n');
    let open: { indent: string; lang: string; start: number; body: string[] } | undefined;
    let index = 0;
    lines.forEach((text, i) => {
      const fence = FENCE.exec(text);
      if (!open) {
        if (fence) open = { indent: fence[1] ?? '', lang: fence[2] ?? '', start: i + 1, body: [] };
        return;
      }
      if (fence && text.trim() === '```') {
        const code = open.body.map((l) => (l.startsWith(open!.indent) ? l.slice(open!.indent.length) : l)).join('\n');
        if (PROGRAM_LANGS.has(open.lang) && /^import\s/m.test(code)) {
          index++;
          const file = NAMED.exec(code.trimStart())?.[1] ?? `program-${index}.ts`;
          programs.push({ name: `${page}#${file}`, page, line: open.start, code: `${code}\n` });
        }
        open = undefined;
        return;
      }
      open.body.push(text);
    });
  }
  return programs;
}

/** README.md, every page of docs/ and of docs/integrations/. */
export function documentationPages(root: string): string[] {
  // docs/ and its folders (docs/transports/, docs/integrations/ …), every page.
  const docs = (readdirSync(join(root, 'docs'), { recursive: true }) as string[])
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f.split('\\').join('/')}`)
    .sort();
  return ['README.md', ...docs];
}

/**
 * Writes each program into `dir` (inside the repository, so its imports resolve from our node_modules) with a
 * tsconfig that maps the package's own entry points (`surety`, `surety/postgres`, …) to the sources, as its
 * `exports` map them to dist/. Returns the path of each program's file, by name.
 */
export function writePrograms(root: string, dir: string, programs: readonly DocProgram[]): Map<string, string> {
  mkdirSync(dir, { recursive: true });
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    name: string;
    exports: Record<string, string | { default?: string }>;
  };
  const paths: Record<string, string[]> = {};
  for (const [subpath, target] of Object.entries(pkg.exports)) {
    const file = typeof target === 'string' ? target : target.default;
    if (!file?.startsWith('./dist/') || !file.endsWith('.js')) continue;
    const source = relative(dir, join(root, 'src', file.slice('./dist/'.length).replace(/\.js$/, '.ts')));
    paths[subpath === '.' ? pkg.name : `${pkg.name}/${subpath.slice(2)}`] = [source];
  }
  const base = JSON.parse(readFileSync(join(root, 'tsconfig.json'), 'utf8')) as { compilerOptions: object };
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { ...base.compilerOptions, noEmit: true, rootDir: root, paths },
      include: ['*.ts'],
    }),
  );
  const files = new Map<string, string>();
  for (const p of programs) {
    const file = join(dir, `${p.name.replace(/[^A-Za-z0-9.]+/g, '_')}`.replace(/\.(ts|js|mjs)$/, '') + '.ts');
    writeFileSync(file, p.code);
    files.set(p.name, file);
  }
  return files;
}
