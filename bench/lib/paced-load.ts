/**
 * Open-loop, evenly paced load: one request every 1/rate seconds for `secs`, whatever the answers
 * do (autocannon's `overallRate` sends each second's requests in a burst, which measures the
 * burst's queue rather than the service). Given several URLs (one per server process), the
 * requests go to them in turn, as a round-robin load balancer would send them. Returns the latencies of the 200 answers (ms, sorted),
 * the failures, the rate reached and p50/p99; `onAnswer` sees each answer's status and body.
 */
export async function paced(
  url: string | readonly string[],
  init: RequestInit,
  rate: number,
  secs: number,
  onAnswer?: (status: number, body: string) => void,
): Promise<{ latencies: number[]; failures: number; reached: number; p50: number; p99: number }> {
  const latencies: number[] = [];
  let failures = 0;
  const inflight: Promise<void>[] = [];
  const start = performance.now();
  const total = Math.round(rate * secs);
  const urls = typeof url === 'string' ? [url] : url;
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const t = performance.now();
    inflight.push(
      fetch(urls[i % urls.length]!, init).then(
        async (res) => {
          const text = onAnswer ? await res.text() : (await res.arrayBuffer(), '');
          onAnswer?.(res.status, text);
          if (res.status === 200) latencies.push(performance.now() - t);
          else failures++;
        },
        () => void failures++,
      ),
    );
  }
  await Promise.all(inflight);
  const elapsed = (performance.now() - start) / 1000;
  latencies.sort((a, b) => a - b);
  const q = (p: number) =>
    +(latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? NaN).toFixed(2);
  return {
    latencies,
    failures,
    reached: +(latencies.length / elapsed).toFixed(1),
    p50: q(0.5),
    p99: q(0.99),
  };
}
