import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  readConfigFile,
  type ModelCatalogEntry,
  type PlanLimits,
  type PlansFile,
  type TriageFile,
} from './config-files.js';

export type { ModelCatalogEntry, PlanLimits, TriageFile } from './config-files.js';

/**
 * The one validated configuration of a process (docs/configuration.md). `loadConfig` is the
 * only place that reads the environment; everything else receives a `Config`.
 * Defaults that are not secrets live in `config/` beside `src/`.
 */
/**
 * How a batch item's job is retried after an error that is not the item's own (the database or
 * the queue was unreachable, a bug): an item's own errors are recorded on it and never retried.
 * Once the attempts are spent, the triage worker fails the item with `internal_error`, so its
 * batch still finishes (`workers/triage-worker.ts`).
 */
export interface ItemRetry {
  /** Runs of an item's job, the first included. @defaultValue 5 */
  attempts: number;
  /** Wait before the first retry, doubled before each next one. @defaultValue 1000 ms */
  backoffMs: number;
}

/**
 * What one upload may cost the machine (docs/ingestion.md#upload-bounds): disk, connections and descriptors stay
 * bounded per client whatever the body looks like.
 */
export interface UploadLimits {
  /** No body bytes for this long: 408, partial file deleted (UPLOAD_IDLE_TIMEOUT_MS). @defaultValue 30,000 */
  idleTimeoutMs: number;
  /** The whole body must arrive within this (UPLOAD_BODY_TIMEOUT_MS); also bounds `.part` files. @defaultValue 30 min */
  bodyTimeoutMs: number;
  /** Uploads of one workspace a web process reads at once; past it 429 (UPLOADS_PER_WORKSPACE). @defaultValue 4 */
  perWorkspace: number;
  /** Uploads a web process reads at once; past it 503 (UPLOADS_MAX_CONCURRENT). @defaultValue 32 */
  maxConcurrent: number;
  /** Free bytes scan storage keeps; an upload that would go below is 503 (SCAN_STORAGE_MIN_FREE_BYTES). @defaultValue 1 GiB */
  minFreeBytes: number;
  /** Most a gzip body may expand, decompressed over compressed bytes (GZIP_MAX_RATIO). @defaultValue 200 */
  gzipMaxRatio: number;
  /** Decompressed bytes of a gzip body, on top of the plan's limit (GZIP_MAX_BYTES). @defaultValue SCAN_MAX_BYTES */
  gzipMaxBytes: number;
}

/** S3-compatible object storage (docs/configuration.md#object-storage). */
export interface S3Config {
  bucket: string;
  /** Key prefix of every object, so deployments can share a bucket (S3_PREFIX). @defaultValue '' */
  prefix: string;
  /** Endpoint URL of an S3-compatible server (S3_ENDPOINT); null: AWS's endpoint for the region. */
  endpoint: string | null;
  /** @defaultValue us-east-1 */
  region: string;
  /** Static credentials (S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY); null: the SDK's default chain. */
  credentials: { accessKeyId: string; secretAccessKey: string } | null;
  /** Path-style URLs (`endpoint/bucket/key`), which most S3-compatible servers need. @defaultValue false */
  forcePathStyle: boolean;
}

export const DEFAULT_ITEM_RETRY: Readonly<ItemRetry> = Object.freeze({ attempts: 5, backoffMs: 1000 });

export interface Config {
  port: number;
  host: string;
  /** Absent: an embedded PostgreSQL is started in `${dataDir}/postgres`. */
  databaseUrl: string | null;
  /** Absent: BullMQ runs on its PostgreSQL backend and invalidations use LISTEN/NOTIFY. */
  redisUrl: string | null;
  /** Prefix of every Redis key we write (queues, rate limits), so deployments can share a Redis. */
  redisPrefix: string;
  /** Server secret for key HMACs. Absent in embedded mode: generated and kept in the data folder. */
  keyPepper: string | null;
  dataDir: string;
  embeddedPostgresPort: number;
  /** The disk driver's folder for scan and export files (SCAN_STORAGE_DIR); unused with {@link Config.s3}. */
  scanStorageDir: string;
  /**
   * S3-compatible object storage for scan and export files, shared by processes on many
   * machines (S3_BUCKET and the other S3_* variables); null: the local disk driver.
   */
  s3: S3Config | null;
  /**
   * Which proxies' `X-Forwarded-For` is believed (TRUST_PROXY): false (default: the socket's
   * address is the client), a hop count, or addresses and CIDR ranges (Fastify's `trustProxy`).
   */
  trustProxy: false | number | string[];
  /** The service's version (package.json), named in exports. */
  version: string;
  /** Above this many cases a direct case export answers 413 and points at an export job (EXPORT_SYNC_MAX_ROWS). */
  exportSyncMaxRows: number;
  scanMaxBytes: number;
  /** Bounds on scan uploads (docs/ingestion.md#upload-bounds); see {@link UploadLimits}. */
  uploads: UploadLimits;
  logLevel: string;
  /**
   * `pretty`: one short human-readable line per request and per event (pino-pretty); `json`: pino's
   * JSON lines; `auto` (default): pretty for the `all` role on a terminal (`npm start`), else JSON.
   */
  logFormat: 'auto' | 'json' | 'pretty';
  /** How long a verified key stays in a process's cache; invalidations end it sooner. */
  keyCacheTtlMs: number;
  /**
   * Well-formed keys that match no key a client address may present per minute (per web
   * process) before its lookups are paced to a sixth of this a second (past the pace 429 without
   * a lookup; a valid key still gets through when the pace has room). @defaultValue 60
   */
  authFailuresPerMinute: number;
  /**
   * Longest a triage call waits for a provider's rate-limit capacity before the router goes
   * to the next tier (docs/operations.md#failure-behaviour). @defaultValue 5000
   */
  providerQueueMaxWaitMs: number;
  /**
   * Longest one triage request (a single or case triage, or one batch item) spends walking the
   * escalation chain, every hop and wait included: a provider that accepts and never answers
   * cannot hold it longer. Past it: the policy's safe answer, else 503 `triage_unavailable`.
   * @defaultValue 20000
   */
  triageDeadlineMs: number;
  /** Absolute base URL used in links we print; defaults to http://HOST:PORT. */
  publicBaseUrl: string;
  cookieSecure: boolean;
  /**
   * Batch-triage jobs a worker process runs at once. Their answers are stored together (group
   * commit), so more concurrent jobs mean fewer round trips per item; provider limiters still
   * bound the calls to remote models. @defaultValue 32
   */
  workerConcurrency: number;
  /**
   * Most AI calls a web process leases at once for single requests to remote providers (one
   * reservation per lease, not per request; see `ai-call-leases.ts`). 1: a reservation per
   * request, the exact count at the price of a round trip. @defaultValue 25
   */
  aiCallLeaseMax: number;
  /**
   * Runs of a batch item's job before its item is failed with `internal_error`, and the wait
   * before the first retry (doubled each time): for errors that are not the item's own.
   * @defaultValue 5 runs, 1,000 ms
   */
  batchItemRetry: ItemRetry;
  /**
   * How long after its acceptance a batch's items may wait for model capacity; an item still
   * waiting then fails with `overloaded` (docs/triage.md#waiting-for-model-capacity).
   * @defaultValue 3600000
   */
  batchDeadlineMs: number;
  parserThreads: number;
  trialDays: number;
  plans: { free: PlanLimits; service: PlanLimits };
  models: ModelCatalogEntry[];
  /**
   * `config/triage.json`, or the file TRIAGE_CONFIG_FILE names instead (another chain, limits or
   * endpoints), checked against its schema; the triage engine adds the defaults.
   */
  triage: TriageFile;
  /** Provider settings are passed through untouched to the provider factory (see .env.example). */
  providerEnv: Readonly<Record<string, string>>;
  inhouseEnabled: boolean;
  /** Accept `http://127.0.0.1` batch webhooks (tests only). */
  webhookAllowLoopbackHttp: boolean;
  /**
   * Let batch webhooks reach private-network addresses (loopback, RFC 1918, link-local, unique-local)
   * and internal names, at acceptance and at delivery. For local receivers in tests; never on a hosted
   * deployment, where it reopens server-side request forgery. @defaultValue false
   */
  webhookAllowPrivateHosts: boolean;
  /** Accept `http://127.0.0.1` OpenID issuers for single sign-on (tests only). @defaultValue false */
  ssoAllowLoopbackHttp: boolean;
  /**
   * Let single sign-on reach OpenID issuers on private-network addresses and internal names (a
   * self-hosted deployment beside its Keycloak); never on a hosted deployment. @defaultValue false
   */
  ssoAllowPrivateHosts: boolean;
  /** How long the triage cache of enrichment keeps a CVE's record. */
  enrichmentCacheTtlMs: number;
  /** Sources the daily enrichment job refreshes from (URL or file path); none set: no job. */
  enrichmentSources: { kev: string | null; epss: string | null; nvd: string[]; vulnrichment: string[] };
  enrichmentRefreshEveryMs: number;
  /** Bearer token `GET /metrics` requires (METRICS_TOKEN); absent: the endpoint is open. */
  metricsToken: string | null;
  /** Port of the worker process's `/metrics` listener (METRICS_PORT); absent: no listener. */
  metricsPort: number | null;
  /** Password of the operators' queue dashboard at `/admin/queues` (ADMIN_TOKEN); absent: not mounted. */
  adminToken: string | null;
  /**
   * Outgoing email for invitations and password resets (SMTP_URL, MAIL_FROM: both or neither);
   * null: nothing is emailed and the links are shown to the inviter or printed by the admin CLI.
   */
  mail: { smtpUrl: string; from: string } | null;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** The repository (or install) root: `config/` and `src/` sit below it, also when running from `dist/`. */
export const projectRoot = findRoot(path.dirname(fileURLToPath(import.meta.url)));

function findRoot(start: string): string {
  let dir = start;
  for (let i = 0; i < 6; i++) {
    try {
      readFileSync(path.join(dir, 'config', 'models.json'));
      return dir;
    } catch {
      dir = path.dirname(dir);
    }
  }
  return process.cwd();
}

function packageVersion(): string {
  try {
    return (JSON.parse(readFileSync(path.join(projectRoot, 'package.json'), 'utf8')) as { version: string })
      .version;
  } catch {
    return '0.0.0';
  }
}

/**
 * The checked-in `config/triage.json`, validated: the engine's defaults where no `Config` is at
 * hand (the router's thresholds in unit tests and tools). The running process uses
 * `Config.triage`, which TRIAGE_CONFIG_FILE may replace.
 * @throws ConfigError naming the bad field when the file does not match its schema.
 */
export function readDefaultTriageFile(): TriageFile {
  const problems: string[] = [];
  const file = readConfigFile(
    'triage',
    path.join(projectRoot, 'config', 'triage.json'),
    'config/triage.json',
    problems,
  );
  if (file === null) throw new ConfigError(problems);
  return file;
}

const PROVIDER_ENV = /^(OPENAI|ANTHROPIC|TRIAGE|PROVIDER)_/;

/**
 * Parses `env` once; throws a `ConfigError` naming every bad variable. `needsKeyPepper: false`
 * is for commands that never hash a key (the admin CLI's `enrich`): they run on DATABASE_URL
 * without KEY_PEPPER.
 */
export function loadConfig(
  env: Record<string, string | undefined> = process.env,
  options: { needsKeyPepper?: boolean } = {},
): Readonly<Config> {
  const problems: string[] = [];
  const read = new Reader(env, problems);

  const port = read.int('PORT', 3000, 0, 65535);
  const host = read.string('HOST', '127.0.0.1');
  const databaseUrl = read.url('DATABASE_URL', ['postgres:', 'postgresql:']);
  const redisUrl = read.url('REDIS_URL', ['redis:', 'rediss:']);
  const keyPepper = read.optional('KEY_PEPPER');
  if (keyPepper !== null && keyPepper.length < 32)
    problems.push('KEY_PEPPER: must be at least 32 characters');
  if (keyPepper === null && databaseUrl !== null && options.needsKeyPepper !== false) {
    problems.push('KEY_PEPPER: required when DATABASE_URL is set (generate one with `openssl rand -hex 32`)');
  }
  const dataDir = path.resolve(read.string('DATA_DIR', path.join(process.cwd(), '.data')));
  const plansFile = read.string('PLANS_FILE', path.join(projectRoot, 'config', 'plans.json'));
  const scanMaxBytes = read.int('SCAN_MAX_BYTES', 2 * 1024 ** 3, 1024, Number.MAX_SAFE_INTEGER);
  const publicBase = read.url('PUBLIC_BASE_URL', ['http:', 'https:']);

  const plansJson = readConfigFile('plans', plansFile, 'PLANS_FILE', problems);
  const modelsJson = readConfigFile(
    'models',
    path.join(projectRoot, 'config', 'models.json'),
    'config/models.json',
    problems,
  );
  const triageFile = read.optional('TRIAGE_CONFIG_FILE');
  const triageJson = readConfigFile(
    'triage',
    triageFile ?? path.join(projectRoot, 'config', 'triage.json'),
    triageFile ? 'TRIAGE_CONFIG_FILE' : 'config/triage.json',
    problems,
  );

  const providerEnv: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (PROVIDER_ENV.test(k) && v !== undefined) providerEnv[k] = v;

  const config: Config = {
    port,
    host,
    databaseUrl,
    redisUrl,
    redisPrefix: read.string('REDIS_PREFIX', 'svc'),
    keyPepper,
    dataDir,
    embeddedPostgresPort: read.int('EMBEDDED_PG_PORT', 54329, 1, 65535),
    scanStorageDir: path.resolve(read.string('SCAN_STORAGE_DIR', path.join(dataDir, 'scans'))),
    s3: readS3(read, problems),
    trustProxy: readTrustProxy(read.optional('TRUST_PROXY'), problems),
    scanMaxBytes,
    uploads: {
      idleTimeoutMs: read.int('UPLOAD_IDLE_TIMEOUT_MS', 30_000, 100, 3_600_000),
      bodyTimeoutMs: read.int('UPLOAD_BODY_TIMEOUT_MS', 30 * 60_000, 1_000, 24 * 3_600_000),
      perWorkspace: read.int('UPLOADS_PER_WORKSPACE', 4, 1, 10_000),
      maxConcurrent: read.int('UPLOADS_MAX_CONCURRENT', 32, 1, 100_000),
      minFreeBytes: read.int('SCAN_STORAGE_MIN_FREE_BYTES', 1024 ** 3, 0, Number.MAX_SAFE_INTEGER),
      gzipMaxRatio: read.int('GZIP_MAX_RATIO', 200, 2, 1_000_000),
      gzipMaxBytes: read.int('GZIP_MAX_BYTES', scanMaxBytes, 1024, Number.MAX_SAFE_INTEGER),
    },
    version: packageVersion(),
    exportSyncMaxRows: read.int('EXPORT_SYNC_MAX_ROWS', 50_000, 1, 100_000_000),
    logLevel: read.oneOf('LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], 'info'),
    logFormat: read.oneOf('LOG_FORMAT', ['auto', 'json', 'pretty'], 'auto'),
    keyCacheTtlMs: read.int('KEY_CACHE_TTL_MS', 30_000, 0, 3_600_000),
    authFailuresPerMinute: read.int('AUTH_FAILURES_PER_MINUTE', 60, 1, 1_000_000),
    providerQueueMaxWaitMs: read.int('PROVIDER_QUEUE_MAX_WAIT_MS', 5_000, 0, 600_000),
    triageDeadlineMs: read.int('TRIAGE_DEADLINE_MS', 20_000, 100, 600_000),
    publicBaseUrl: (publicBase ?? `http://${host.includes(':') ? `[${host}]` : host}:${port}`).replace(
      /\/$/,
      '',
    ),
    cookieSecure: read.bool('COOKIE_SECURE', publicBase?.startsWith('https:') ?? false),
    workerConcurrency: read.int('WORKER_CONCURRENCY', 32, 1, 1024),
    aiCallLeaseMax: read.int('AI_CALL_LEASE_MAX', 25, 1, 1000),
    batchItemRetry: {
      attempts: read.int('BATCH_ITEM_ATTEMPTS', DEFAULT_ITEM_RETRY.attempts, 1, 50),
      backoffMs: read.int('BATCH_ITEM_BACKOFF_MS', DEFAULT_ITEM_RETRY.backoffMs, 0, 600_000),
    },
    // Below the batch reservation's 24 h: a batch finishes while its reservation still holds.
    batchDeadlineMs: read.int('BATCH_DEADLINE_MS', 3_600_000, 1_000, 12 * 3_600_000),
    parserThreads: read.int('PARSER_THREADS', 2, 1, 64),
    trialDays: plansJson?.trialDays ?? 14,
    plans: plansFromFile(plansJson, scanMaxBytes),
    models: modelsJson?.models ?? [],
    triage: triageJson ?? {
      thresholds: { confidence: 0, epss: 0, cvss: 0 },
      localModel: '',
      chain: [],
      providers: {},
    },
    providerEnv: Object.freeze(providerEnv),
    inhouseEnabled: read.bool('INHOUSE_ENABLED', false),
    webhookAllowLoopbackHttp: read.bool('WEBHOOK_ALLOW_LOOPBACK_HTTP', false),
    webhookAllowPrivateHosts: read.bool('WEBHOOK_ALLOW_PRIVATE_HOSTS', false),
    ssoAllowLoopbackHttp: read.bool('SSO_ALLOW_LOOPBACK_HTTP', false),
    ssoAllowPrivateHosts: read.bool('SSO_ALLOW_PRIVATE_HOSTS', false),
    enrichmentCacheTtlMs: read.int('ENRICHMENT_CACHE_TTL_MS', 300_000, 0, 86_400_000),
    enrichmentSources: {
      kev: read.optional('ENRICHMENT_KEV_SOURCE'),
      epss: read.optional('ENRICHMENT_EPSS_SOURCE'),
      nvd: (read.optional('ENRICHMENT_NVD_SOURCES') ?? '')
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean),
      vulnrichment: (read.optional('ENRICHMENT_VULNRICHMENT_SOURCES') ?? '')
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean),
    },
    enrichmentRefreshEveryMs: read.int('ENRICHMENT_REFRESH_EVERY_MS', 86_400_000, 60_000, 30 * 86_400_000),
    metricsToken: read.optional('METRICS_TOKEN'),
    metricsPort: read.optional('METRICS_PORT') === null ? null : read.int('METRICS_PORT', 0, 0, 65535),
    adminToken: read.optional('ADMIN_TOKEN'),
    mail: readMail(read, problems),
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(config);
}

/** SMTP_URL and MAIL_FROM, both or neither (docs/configuration.md#email). */
function readMail(read: Reader, problems: string[]): Config['mail'] {
  const smtpUrl = read.url('SMTP_URL', ['smtp:', 'smtps:']);
  const from = read.optional('MAIL_FROM');
  if (smtpUrl === null && from === null) return null;
  if (smtpUrl === null || from === null) {
    problems.push(`${smtpUrl === null ? 'SMTP_URL' : 'MAIL_FROM'}: required when the other is set`);
    return null;
  }
  if (!/^[^\s@<>]+@[^\s@<>]+$|<[^\s@<>]+@[^\s@<>]+>$/.test(from)) {
    problems.push('MAIL_FROM: must be an address (ops@example.com or "Name <ops@example.com>")');
  }
  return { smtpUrl, from };
}

function readS3(read: Reader, problems: string[]): S3Config | null {
  const bucket = read.optional('S3_BUCKET');
  const endpoint = read.url('S3_ENDPOINT', ['http:', 'https:']);
  const accessKeyId = read.optional('S3_ACCESS_KEY_ID');
  const secretAccessKey = read.optional('S3_SECRET_ACCESS_KEY');
  const region = read.string('S3_REGION', 'us-east-1');
  const forcePathStyle = read.bool('S3_FORCE_PATH_STYLE', false);
  const prefix = read.string('S3_PREFIX', '');
  if (bucket === null) {
    const stray = ['S3_ENDPOINT', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY'].filter(
      (n) => read.optional(n) !== null,
    );
    if (stray.length > 0) problems.push(`S3_BUCKET: required when ${stray.join(', ')} is set`);
    return null;
  }
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket))
    problems.push(
      'S3_BUCKET: expected a bucket name of 3 to 63 lower-case letters, digits, dots and hyphens',
    );
  if ((accessKeyId === null) !== (secretAccessKey === null))
    problems.push(
      'S3_ACCESS_KEY_ID: S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY are set together or not at all',
    );
  if (!/^[A-Za-z0-9!_.*'()/-]*$/.test(prefix) || prefix.startsWith('/'))
    problems.push("S3_PREFIX: expected letters, digits and !_.*'()-/, not starting with /");
  if (!/^[a-z0-9-]+$/.test(region)) problems.push(`S3_REGION: expected a region name such as us-east-1`);
  return {
    bucket,
    prefix,
    endpoint,
    region,
    credentials: accessKeyId !== null && secretAccessKey !== null ? { accessKeyId, secretAccessKey } : null,
    forcePathStyle,
  };
}

/** TRUST_PROXY: false/off, a hop count, or a comma-separated list of addresses and CIDR ranges. */
function readTrustProxy(value: string | null, problems: string[]): false | number | string[] {
  if (value === null || ['false', 'off', 'no', '0'].includes(value.toLowerCase())) return false;
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (hops <= 64) return hops;
  }
  const list = value
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
  const bad = list.filter((entry) => {
    const [addr, bits, extra] = entry.split('/');
    if (extra !== undefined || !addr) return true;
    const family = isIP(addr);
    if (family === 0) return true;
    if (bits === undefined) return false;
    const n = Number(bits);
    return !/^\d+$/.test(bits) || n > (family === 4 ? 32 : 128);
  });
  if (list.length === 0 || bad.length > 0) {
    problems.push(
      `TRUST_PROXY: expected false, a hop count (1-64), or addresses/CIDR ranges separated by commas; bad: ${bad.join(', ') || value}`,
    );
    return false;
  }
  return list;
}

function plansFromFile(file: PlansFile | null, scanMaxBytes: number): Config['plans'] {
  const fallback: PlanLimits = {
    aiCallsPerMonth: 0,
    requestsPerMinute: 0,
    batchMaxItems: 0,
    scanMaxBytes: 0,
  };
  if (!file) return { free: fallback, service: fallback };
  const plan = (name: 'free' | 'service'): PlanLimits => {
    const p = file.plans[name];
    return { ...p, scanMaxBytes: Math.min(p.scanMaxBytes ?? scanMaxBytes, scanMaxBytes) };
  };
  return { free: plan('free'), service: plan('service') };
}

class Reader {
  constructor(
    private readonly env: Record<string, string | undefined>,
    private readonly problems: string[],
  ) {}

  optional(name: string): string | null {
    const v = this.env[name];
    return v === undefined || v.trim() === '' ? null : v.trim();
  }

  string(name: string, fallback: string): string {
    return this.optional(name) ?? fallback;
  }

  int(name: string, fallback: number, min: number, max: number): number {
    const v = this.optional(name);
    if (v === null) return fallback;
    const n = Number(v);
    if (!/^\d+$/.test(v) || !Number.isSafeInteger(n) || n < min || n > max) {
      this.problems.push(`${name}: expected a whole number from ${min} to ${max}, got "${v}"`);
      return fallback;
    }
    return n;
  }

  bool(name: string, fallback: boolean): boolean {
    const v = this.optional(name);
    if (v === null) return fallback;
    if (['1', 'true', 'yes', 'on'].includes(v.toLowerCase())) return true;
    if (['0', 'false', 'no', 'off'].includes(v.toLowerCase())) return false;
    this.problems.push(`${name}: expected true or false, got "${v}"`);
    return fallback;
  }

  oneOf<T extends string>(name: string, values: readonly T[], fallback: T): T {
    const v = this.optional(name);
    if (v === null) return fallback;
    if ((values as readonly string[]).includes(v)) return v as T;
    this.problems.push(`${name}: expected one of ${values.join(', ')}, got "${v}"`);
    return fallback;
  }

  /** URLs are reported without their credentials. */
  url(name: string, protocols: string[]): string | null {
    const v = this.optional(name);
    if (v === null) return null;
    try {
      const u = new URL(v);
      if (protocols.includes(u.protocol)) return v;
      this.problems.push(`${name}: expected a ${protocols.join(' or ')} URL, got protocol "${u.protocol}"`);
    } catch {
      this.problems.push(`${name}: not a valid URL`);
    }
    return null;
  }
}
