import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { errorStatus } from '@deskpilot/core';
import { errorsTable, withErrorsTable } from './errors-table.ts';

const readme = readFileSync(new URL('../packages/core/README.md', import.meta.url), 'utf8');

describe('the errors table of the core README', () => {
  it('is the one generated from errorStatus and errorTitle (run `node scripts/errors-table.ts` after changing them)', () => {
    expect(withErrorsTable(readme)).toBe(readme);
  });

  it('lists every code once with its status, so a code added without regenerating fails the test above', () => {
    for (const [code, status] of Object.entries(errorStatus))
      expect(errorsTable()).toContain(`| \`${code}\` | ${status} |`);
    const tampered = readme.replace('| `rate_limited` | 429 |', '| `rate_limited` | 420 |');
    expect(tampered).not.toBe(readme);
    expect(withErrorsTable(tampered)).toBe(readme);
  });
});
