import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  catalogModel,
  costMicros,
  costPicos,
  parsePrice,
  type PricedModel,
} from '../../../src/domain/triage/pricing.js';

const catalog = (
  JSON.parse(readFileSync(new URL('../../../config/models.json', import.meta.url), 'utf8')) as {
    models: PricedModel[];
  }
).models;
const v1 = catalogModel(catalog, 'svc-triage-v1');
const routine = catalogModel(catalog, 'svc-triage-routine');

describe('parsePrice', () => {
  it.each([
    { price: '3.00', scaled: 3_000_000_000_000n },
    { price: '0.10', scaled: 100_000_000_000n },
    { price: '15', scaled: 15_000_000_000_000n },
    { price: '0.000000000001', scaled: 1n },
  ])('$price → $scaled', ({ price, scaled }) => {
    expect(parsePrice(price)).toBe(scaled);
  });

  it.each(['', '-1.00', '1e3', '0.1.2', ' 3.00', '0.0000000000001'])('rejects %j', (price) => {
    expect(() => parsePrice(price)).toThrow(/invalid price/);
  });
});

describe('costMicros (catalog prices of docs/triage.md#model-catalog)', () => {
  it.each([
    { name: '1M input on v1', model: v1, input: 1_000_000, output: 0, micros: 3_000_000 },
    { name: '1M output on v1', model: v1, input: 0, output: 1_000_000, micros: 15_000_000 },
    { name: '1M + 1M on routine', model: routine, input: 1_000_000, output: 1_000_000, micros: 500_000 },
    { name: 'typical v1 call', model: v1, input: 1234, output: 321, micros: 1234 * 3 + 321 * 15 },
    // 7 × 0.10 + 3 × 0.40 = 1.9 µ$ → 2 (half up); a float sum would give 1.9000000000000001
    { name: 'fractional routine call rounds half up', model: routine, input: 7, output: 3, micros: 2 },
    {
      name: '5 input tokens on routine is exactly 0.5 µ$ → 1',
      model: routine,
      input: 5,
      output: 0,
      micros: 1,
    },
    { name: '4 input tokens on routine is 0.4 µ$ → 0', model: routine, input: 4, output: 0, micros: 0 },
    { name: 'zero', model: v1, input: 0, output: 0, micros: 0 },
  ])('$name', ({ model, input, output, micros }) => {
    expect(costMicros(input, output, model)).toBe(micros);
  });

  it('is exact where floats drift: 3 × 0.10 per token', () => {
    expect(0.1 * 3).not.toBe(0.3);
    expect(costMicros(3_000_000, 0, routine)).toBe(300_000);
  });

  it.each([-1, 1.5, Number.NaN])('rejects token count %s', (n) => {
    expect(() => costMicros(n, 0, v1)).toThrow(/non-negative integer/);
  });
});

describe('costPicos', () => {
  it('is exact in pico-dollars, where micro-dollars would round', () => {
    // 5 routine input tokens: 0.5 µ$, rounded to 1 µ$ but kept exact as 500,000 p$.
    expect(costPicos(5, 0, routine)).toBe(500_000n);
    expect(costMicros(5, 0, routine)).toBe(1);
    expect(costPicos(1000, 200, v1)).toBe(6_000_000_000n);
  });

  it('refuses a price it could not keep exact', () => {
    expect(() =>
      costPicos(1, 0, { id: 'odd', inputPricePerMillion: '0.0000001', outputPricePerMillion: '1' }),
    ).toThrow(/six decimals/);
  });
});

describe('catalogModel', () => {
  it('throws for a tier billed as an unknown model', () => {
    expect(() => catalogModel(catalog, 'nope')).toThrow(/not in the catalog/);
  });
});

describe('prices parsed once per catalog entry', () => {
  it('prices an entry again when its price strings change', () => {
    const model = { id: 'm', inputPricePerMillion: '1.00', outputPricePerMillion: '2.00' };
    expect(costMicros(1_000_000, 1_000_000, model)).toBe(3_000_000);
    model.inputPricePerMillion = '3.00';
    expect(costMicros(1_000_000, 1_000_000, model)).toBe(5_000_000);
  });
});
