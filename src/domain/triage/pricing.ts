/**
 * Cost arithmetic in integers (docs/triage.md#model-catalog prices, docs/triage.md#billing spend). The one place prices
 * are parsed and multiplied.
 *
 * A catalog price is USD per 1M tokens, so one token costs `price` micro-dollars:
 * cost(µ$) = inputTokens × inputPrice + outputTokens × outputPrice. Prices are decimal strings
 * ("0.10"); they are parsed into an integer numerator over 10^12 so the product is exact in
 * BigInt. The ledger keeps that exact cost in pico-dollars (`costPicos`); micro-dollars are
 * rounded once, half up. Floats never touch money.
 */

/** The catalog fields pricing needs (config/models.json). */
export interface PricedModel {
  id: string;
  inputPricePerMillion: string;
  outputPricePerMillion: string;
}

const SCALE_DIGITS = 12;
const SCALE = 10n ** BigInt(SCALE_DIGITS);
const PRICE_PATTERN = /^(\d{1,9})(?:\.(\d{1,12}))?$/;

/** Parses "3.00" into 3_000_000_000_000n (price × 10^12); throws on anything else. */
export function parsePrice(price: string): bigint {
  const m = PRICE_PATTERN.exec(price);
  if (m === null) throw new Error(`invalid price ${JSON.stringify(price)}: expected a decimal like "0.10"`);
  const whole = BigInt(m[1] ?? '0');
  const fraction = BigInt((m[2] ?? '').padEnd(SCALE_DIGITS, '0'));
  return whole * SCALE + fraction;
}

function tokens(n: number, what: string): bigint {
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`${what} must be a non-negative integer, got ${n}`);
  return BigInt(n);
}

/**
 * A model's two prices, parsed once per catalog entry object (the catalog is frozen at start):
 * parsing them was most of a ledger row's pricing. Keyed by the entry and checked against its
 * price strings, so an entry built or changed later is parsed again.
 */
const parsedPrices = new WeakMap<PricedModel, { input: string; output: string; scaled: [bigint, bigint] }>();

function pricesOf(model: PricedModel): [bigint, bigint] {
  const hit = parsedPrices.get(model);
  if (hit && hit.input === model.inputPricePerMillion && hit.output === model.outputPricePerMillion)
    return hit.scaled;
  const scaled: [bigint, bigint] = [
    parsePrice(model.inputPricePerMillion),
    parsePrice(model.outputPricePerMillion),
  ];
  parsedPrices.set(model, {
    input: model.inputPricePerMillion,
    output: model.outputPricePerMillion,
    scaled,
  });
  return scaled;
}

/** Exact cost × 10^12 micro-dollars, before rounding. */
function scaledCost(inputTokens: number, outputTokens: number, model: PricedModel): bigint {
  const [input, output] = pricesOf(model);
  return tokens(inputTokens, 'inputTokens') * input + tokens(outputTokens, 'outputTokens') * output;
}

function roundHalfUp(scaled: bigint): number {
  return Number((scaled + SCALE / 2n) / SCALE);
}

/**
 * Cost of one call in integer micro-dollars, rounded half up once.
 * @example costMicros(1_000_000, 0, svcTriageV1) === 3_000_000 // $3.00
 */
export function costMicros(inputTokens: number, outputTokens: number, model: PricedModel): number {
  return roundHalfUp(scaledCost(inputTokens, outputTokens, model));
}

const SCALE_PER_PICO = 10n ** 6n;

/**
 * Exact cost of one call in pico-dollars (10^-12 USD), as the usage ledger stores it. Exact for
 * prices with up to six decimals; a price with more would need rounding here, so it is refused.
 */
export function costPicos(inputTokens: number, outputTokens: number, model: PricedModel): bigint {
  const scaled = scaledCost(inputTokens, outputTokens, model);
  if (scaled % SCALE_PER_PICO !== 0n) throw new Error(`prices of ${model.id} have more than six decimals`);
  return scaled / SCALE_PER_PICO;
}

/** Finds a catalog model by id; throws when a tier is billed as a model the catalog lacks. */
export function catalogModel(catalog: readonly PricedModel[], id: string): PricedModel {
  const model = catalog.find((m) => m.id === id);
  if (model === undefined) throw new Error(`model ${id} is not in the catalog`);
  return model;
}
