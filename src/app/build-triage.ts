import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Redis } from 'ioredis';
import type { Config } from '../lib/config.js';
import { projectRoot } from '../lib/config.js';
import type { Logger } from '../lib/logger.js';
import type { Pool } from '../db/pool.js';
import type { QuotaService } from '../domain/usage/quota.js';
import { createCachedEnrichmentLookup } from '../domain/enrichment/cached-lookup.js';
import { buildProviders } from '../domain/triage-engine/providers/build-providers.js';
import { parseTriageConfig } from '../domain/triage-engine/triage-config.js';
import type { ChainTier, Provider } from '../domain/triage-engine/types.js';
import { readInhouseModelFile } from '../domain/inhouse/model-file.js';
import { INHOUSE_MODEL_PATH } from '../domain/inhouse/model-file.js';
import { createInhouseProvider, inhouseTriageRequest } from '../domain/inhouse/provider.js';
import type { GateRecord } from '../domain/inhouse/gate.js';
import { PgGateRecordStore } from '../domain/inhouse/pg-gate-record-store.js';
import { explainInhouseMode } from '../domain/inhouse/shadow.js';
import {
  createTriageService,
  type ShadowEngine,
  type TriageObserver,
  type TriageService,
  type TriageServiceDeps,
} from '../domain/triage/triage-service.js';
import { createAiCallLeases, leaseSize } from '../domain/usage/ai-call-leases.js';

/**
 * Builds the triage service of a process: providers from `config/triage.json` and the
 * provider variables (no credentials: every tier is the local SSVC engine), the cached
 * enrichment lookup, and the in-house model — in shadow until its gate passed for its exact
 * version and the operator set INHOUSE_ENABLED, then serving the routine tier.
 */
export async function buildTriage(deps: {
  config: Config;
  pool: Pool;
  redis: Redis | null;
  quota: QuotaService;
  clock: () => Date;
  logger: Logger;
  pepper: string;
  /** Told of every routed request (metrics). */
  observer?: TriageObserver;
  /** Records and queues the `case.triaged` deliveries of case answers (mapped workflows). */
  caseDeliveries?: TriageServiceDeps['caseDeliveries'];
  /** The jobs layer's producer of a batch's item jobs. */
  enqueueBatchItems(batchId: string, total: number): Promise<void>;
}): Promise<{ triage: TriageService; close(): Promise<void> }> {
  const env = { ...deps.config.providerEnv, REDIS_URL: deps.config.redisUrl ?? undefined };
  // The file's shape was checked by loadConfig; the engine adds its defaults and cross-checks
  // (reserved provider names, a chain tier naming a provider that is not configured).
  const triageConfig = parseTriageConfig(deps.config.triage);
  const built = buildProviders(triageConfig, env, {
    idPrefix: deps.config.redisPrefix,
    ...(deps.redis ? { redis: deps.redis } : {}),
    maxWaitMs: deps.config.providerQueueMaxWaitMs,
    onLimits: (provider, inForce, configured) =>
      deps.logger.info(
        { provider, inForce, configured },
        'provider limits in force differ from this process configuration (the newest configuration wins)',
      ),
    onLimiterStoreError: (provider, err) =>
      deps.logger.warn(
        { provider, err: err.message },
        'shared provider limits unreachable: per-process window used',
      ),
  });
  for (const f of built.fallbacks)
    deps.logger.info(
      { tier: f.tier, provider: f.provider, missing: f.missing },
      'triage tier served by the local engine',
    );
  const providers: Record<string, Provider> = { ...built.providers };
  let chain: ChainTier[] = built.chain;
  let shadow: ShadowEngine | null = null;

  try {
    const model = readInhouseModelFile(path.join(projectRoot, INHOUSE_MODEL_PATH));
    const record = await latestGateRecord(deps, model.version);
    const mode = explainInhouseMode({
      gateRecord: record,
      modelVersion: model.version,
      operatorEnabled: deps.config.inhouseEnabled,
    });
    deps.logger.info(
      { version: model.version, mode: mode.mode, reason: mode.reason },
      'in-house triage model',
    );
    if (mode.mode === 'serving') {
      providers.inhouse = createInhouseProvider(model);
      // Answers name it `inhouse:sha256-<hex>`: the `<provider>:<model_name>` form of docs/triage.md#request-and-answer has one colon.
      const name = model.version.replace(/^sha256:/, 'sha256-');
      chain = chain.map((tier, i) => (i === 0 ? { ...tier, provider: 'inhouse', model: name } : tier));
    } else {
      shadow = {
        engine: 'inhouse',
        modelVersion: model.version,
        answer: (request, enrichment) => ({ ...inhouseTriageRequest(model, request, enrichment) }),
      };
    }
  } catch (err) {
    deps.logger.warn({ err: (err as Error).message }, 'in-house model not loaded; triage runs without it');
  }

  const triage = createTriageService({
    db: deps.pool,
    quota: deps.quota,
    lookup: createCachedEnrichmentLookup(deps.pool, { ttlMs: deps.config.enrichmentCacheTtlMs }),
    providers,
    chain,
    thresholds: triageConfig.thresholds,
    catalog: deps.config.models,
    clock: deps.clock,
    enqueueBatchItems: deps.enqueueBatchItems,
    pepper: deps.pepper,
    webhooks: {
      allowLoopbackHttp: deps.config.webhookAllowLoopbackHttp,
      allowPrivateHosts: deps.config.webhookAllowPrivateHosts,
    },
    shadow,
    logger: deps.logger,
    deadlineMs: deps.config.triageDeadlineMs,
    ...(deps.observer ? { observer: deps.observer } : {}),
    ...(deps.caseDeliveries ? { caseDeliveries: deps.caseDeliveries } : {}),
    leases: createAiCallLeases(deps.quota, {
      clock: deps.clock,
      size: (limit) => leaseSize(limit, deps.config.aiCallLeaseMax),
    }),
  });
  return {
    triage,
    async close() {
      await triage.close(); // the AI calls this process leased but did not use go back
      await built.close();
    },
  };
}

/** Where releases before the `inhouse_gate_records` table kept gate records; no longer read. */
const LEGACY_GATE_FILE = 'inhouse-gate.json';

/**
 * The record that decides whether the model serves, from the database every process shares
 * (docs/triage.md#gate-records). Unreadable counts as no record: the model stays in shadow and
 * the process starts. A record file of an earlier release is not read, only pointed out, so the
 * database stays the one place the decision comes from.
 */
async function latestGateRecord(
  deps: { config: Config; pool: Pool; logger: Logger },
  version: string,
): Promise<GateRecord | null> {
  let record: GateRecord | null = null;
  try {
    record = await new PgGateRecordStore(deps.pool).latestFor(version);
  } catch (err) {
    deps.logger.warn(
      { err: (err as Error).message },
      'in-house gate record unreadable; the model stays in shadow',
    );
    return null;
  }
  const legacy = path.join(deps.config.dataDir, LEGACY_GATE_FILE);
  if (record === null && existsSync(legacy)) {
    deps.logger.warn(
      { file: legacy },
      'gate records in this file are no longer read; copy them to the database with `npm run gate -- --import FILE`',
    );
  }
  return record;
}
