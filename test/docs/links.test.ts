import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { documentationPages } from '../support/doc-programs.js';

// A page moved or renamed must not leave the README or another page pointing at nothing.
const root = fileURLToPath(new URL('../..', import.meta.url));

/** Relative link targets of a Markdown page, outside code blocks, without their #fragment. */
function relativeLinks(markdown: string): string[] {
  const prose = markdown.replace(/```[\s\S]*?```/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1]!)
    .filter((target) => !/^[a-z]+:/i.test(target) && !target.startsWith('#'))
    .map((target) => target.split('#')[0]!);
}

describe('links between the documentation pages', () => {
  for (const page of documentationPages(root)) {
    it(`${page}: every relative link names a file that exists`, () => {
      const links = relativeLinks(readFileSync(join(root, page), 'utf8'));
      const missing = links.filter((target) => !existsSync(join(root, dirname(page), target)));
      expect(missing).toEqual([]);
    });
  }

  it('reads links the way the pages write them', () => {
    expect(relativeLinks('see [a](docs/a.md#x), [b](https://b.example), [c](#c)\n```ts\n[d](d.md)\n```')).toEqual([
      'docs/a.md',
    ]);
  });
});
