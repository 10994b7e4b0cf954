import { Counter, Histogram, type Registry } from 'prom-client';

/**
 * Counters and histograms registered on one process's registry (never prom-client's global one),
 * with their label names typed. Names and labels are those docs/operations.md#metrics lists.
 */
export function metricKit(registry: Registry) {
  const registers = [registry];
  return {
    counter<L extends string = never>(name: string, help: string, labelNames: readonly L[] = []) {
      return new Counter<L>({ name, help, labelNames, registers });
    },
    histogram<L extends string>(name: string, help: string, labelNames: readonly L[], buckets: number[]) {
      return new Histogram<L>({ name, help, labelNames, buckets, registers });
    },
  };
}
