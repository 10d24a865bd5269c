/**
 * Every TypeScript sample of docs/limiter.md type-checks (strict, as the project compiles) and runs
 * as written, printing exactly its `// → ` lines. Only the package import is pointed at src/.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const page = readFileSync(join(root, 'docs/limiter.md'), 'utf8');
const samples = [...page.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]!);
const source = join(root, 'src/limiter/index.ts');

const directory = mkdtempSync(join(tmpdir(), 'sluice-limiter-docs-'));

/** Writes each sample to a temporary .mts importing src/ instead of the package. */
function writeSamples(): string[] {
  return samples.map((code, index) => {
    expect(code, `sample ${index + 1} imports the package`).toContain("from 'sluice/limiter'");
    const file = join(directory, `sample-${index + 1}.mts`);
    writeFileSync(file, code.replaceAll("'sluice/limiter'", JSON.stringify(source)));
    return file;
  });
}

describe('docs/limiter.md samples', () => {
  const files = writeSamples();
  afterAll(() => rmSync(directory, { recursive: true, force: true }));

  it('has samples, each saying what it prints', () => {
    expect(samples.length).toBeGreaterThan(0);
    for (const [index, code] of samples.entries()) expect(code, `sample ${index + 1}`).toMatch(/^\/\/ → /m);
  });

  it('type-check under the project compiler options', () => {
    const tsc = join(root, 'node_modules/typescript/bin/tsc');
    const options = ['--noEmit', '--strict', '--noUncheckedIndexedAccess', '--target', 'ES2022', '--lib', 'ES2023'];
    // The samples live outside the project, so point tsc at its Node types and let them import src/*.ts.
    options.push('--module', 'NodeNext', '--moduleResolution', 'NodeNext', '--skipLibCheck', '--allowImportingTsExtensions');
    options.push('--types', 'node', '--typeRoots', join(root, 'node_modules/@types'));
    let output = '';
    try {
      execFileSync(process.execPath, [tsc, ...options, ...files], { encoding: 'utf8', cwd: root });
    } catch (error) {
      output = String((error as { stdout?: string }).stdout ?? error);
    }
    expect(output).toBe('');
  });

  it('print what their `// →` lines say', () => {
    for (const [index, file] of files.entries()) {
      const expected = [...samples[index]!.matchAll(/^\/\/ → (.*)$/gm)].map((match) => match[1]);
      const output = execFileSync(process.execPath, ['--import', 'tsx', file], { encoding: 'utf8', cwd: root });
      expect(output.trimEnd().split('\n'), `sample ${index + 1}`).toEqual(expected);
    }
  });
});
