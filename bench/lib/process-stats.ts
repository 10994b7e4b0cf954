/** What the benches read about a process from Linux's /proc, and the upload they time. */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';

const mib = (kb: string) => Math.round(Number(kb) / 1024);

/** RSS now and its peak (VmHWM: every thread of the process) from /proc. */
export function memoryOf(pid: number): { rssMiB: number; peakMiB: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return {
    rssMiB: mib(/VmRSS:\s+(\d+)/.exec(status)![1]!),
    peakMiB: mib(/VmHWM:\s+(\d+)/.exec(status)![1]!),
  };
}

/**
 * Resets a process's peak RSS to its current RSS (Linux `clear_refs` 5), so the next
 * {@link memoryOf} reads the peak of what happened since, not of start-up.
 */
export function resetPeak(pid: number): void {
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
}

/** CPU seconds (user + system) of a process, every thread included. */
export function cpuOf(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

/**
 * Uploads `file` with curl (a client outside this process, so its CPU is not the server's) to
 * `POST /api/pipeline/scan`; returns the answer's JSON text and the seconds the upload took.
 */
export function curlUpload(
  baseUrl: string,
  key: string,
  file: string,
  contentType: string,
  name: string,
): { answer: string; uploadS: number } {
  const t0 = performance.now();
  const answer = execFileSync('curl', [
    '-sS',
    '-X',
    'POST',
    '-T',
    file,
    '-H',
    `X-API-Key: ${key}`,
    '-H',
    `Content-Type: ${contentType}`,
    `${baseUrl}/api/pipeline/scan?name=${name}`,
  ]).toString();
  return { answer, uploadS: (performance.now() - t0) / 1000 };
}
