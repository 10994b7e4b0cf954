/** A clock tests move by hand, so trials end and grace periods pass without sleeping. */
export interface TestClock {
  (): Date;
  advance(ms: number): void;
  set(date: Date): void;
}

export function createTestClock(start = new Date()): TestClock {
  let now = start.getTime();
  const clock = (() => new Date(now)) as TestClock;
  clock.advance = (ms) => {
    now += ms;
  };
  clock.set = (d) => {
    now = d.getTime();
  };
  return clock;
}

export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;
