import { describe, expect, it } from 'vitest';
import { presentMoney } from './present-money.js';

describe('presentMoney', () => {
  it.each([
    [{ amount: 12900, currency: 'EUR' }, '€129.00'],
    [{ amount: 12900, currency: 'USD' }, '$129.00'],
    [{ amount: 12900, currency: 'CHF' }, 'CHF 129.00'],
    [{ amount: 12900, currency: 'JPY' }, '¥12,900'],
    [{ amount: 1290, currency: 'KWD' }, 'KWD 1.290'],
  ])('shows %o in its minor unit as %s', (money, display) => {
    expect(presentMoney(money)).toEqual({ ...money, display: display.replace(' ', '\u00a0') });
  });

  it('refuses a code that is not a currency', () => {
    expect(() => presentMoney({ amount: 100, currency: 'euro' })).toThrow(RangeError);
  });
});
