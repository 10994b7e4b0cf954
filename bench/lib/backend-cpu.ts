import type pg from 'pg';
import { cpuOf } from './process-stats.js';

/**
 * The CPU seconds PostgreSQL's backends of one database spent over an interval, read from /proc
 * (the server must run on this machine). A backend that exits takes its counters with it: the
 * server's pool closes idle connections, and a difference of two sums over the backends alive at
 * each end then went negative (−4.9 s for a CLI scan). So each backend is read at the start, at
 * every {@link BackendCpuMeter.sample} and at the end, and counts from its first reading in the
 * interval to its last: a backend that exits loses only what it spent since the last sample.
 */
export class BackendCpuMeter {
  readonly #start = new Map<number, number>();
  readonly #last = new Map<number, number>();
  #gone = 0;

  /** `client` is the bench's own connection to the database (its backend is left out). */
  constructor(private readonly client: pg.Client) {}

  /** Starts an interval: every backend alive now counts from here. */
  async start(): Promise<void> {
    this.#start.clear();
    this.#last.clear();
    this.#gone = 0;
    for (const [pid, cpu] of await this.#read()) {
      this.#start.set(pid, cpu);
      this.#last.set(pid, cpu);
    }
  }

  /** Reads every backend again; a backend first seen now counts from zero (it started in the interval). */
  async sample(): Promise<void> {
    for (const [pid, cpu] of await this.#read()) {
      const last = this.#last.get(pid);
      if (last !== undefined && cpu < last) {
        // The pid was reused by a new backend: bank the old one's share, count the new from zero.
        this.#gone += last - this.#start.get(pid)!;
        this.#start.set(pid, 0);
      }
      if (!this.#start.has(pid)) this.#start.set(pid, 0);
      this.#last.set(pid, cpu);
    }
  }

  /** Ends the interval: the seconds every backend spent in it, as far as the samples saw. */
  async stop(): Promise<number> {
    await this.sample();
    let s = this.#gone;
    for (const [pid, last] of this.#last) s += last - this.#start.get(pid)!;
    return s;
  }

  async #read(): Promise<Map<number, number>> {
    const { rows } = await this.client.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
    );
    const cpu = new Map<number, number>();
    for (const { pid } of rows) {
      try {
        cpu.set(pid, cpuOf(pid));
      } catch {
        // ended meanwhile: its last sample stands
      }
    }
    return cpu;
  }
}
