import { CreateBucketCommand, HeadBucketCommand, S3Client } from '@aws-sdk/client-s3';
import type { Config, S3Config } from '../lib/config.js';
import type { Logger } from '../lib/logger.js';
import { createLocalScanStorage, type ScanStorage } from '../domain/scans/scan-storage.js';
import { createS3ScanStorage } from '../domain/scans/s3-scan-storage.js';

/** The scan and export file store of a process, with what readiness and shutdown need of it. */
export interface OpenedStorage {
  storage: ScanStorage;
  /** Which driver: `disk` or `s3` (named in the start-up banner and logs). */
  driver: 'disk' | 's3';
  /** Resolves when the store answers; for `/readyz`. */
  ping(): Promise<void>;
  close(): void;
}

/**
 * On Node 20 and 21 the AWS SDK warns at its first client that SDK versions published after the
 * first week of January 2027 will need Node 22 (`NodeVersionSupportWarning`). Node 20.19 is in
 * our supported range (package.json `engines`) and the lock file pins an SDK that runs on it, so
 * the warning tells an operator nothing to act on. The SDK's documented switch for that one
 * warning is this variable; every other warning still prints. An operator's own value is kept.
 */
function silenceNodeVersionWarning(): void {
  const major = Number(process.versions.node.split('.')[0]);
  if (major < 22) process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
}

/**
 * An S3 client for an S3-compatible server: checksums only where the operation needs them, since
 * many servers (OpenStack Swift's s3api, older MinIO) do not speak the newest checksum headers.
 */
export function createS3Client(s3: S3Config): S3Client {
  silenceNodeVersionWarning();
  return new S3Client({
    region: s3.region,
    ...(s3.endpoint ? { endpoint: s3.endpoint } : {}),
    forcePathStyle: s3.forcePathStyle,
    ...(s3.credentials ? { credentials: s3.credentials } : {}),
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts: 3,
  });
}

/**
 * Opens the configured store: the local disk (SCAN_STORAGE_DIR, the embedded default) or S3
 * (S3_BUCKET), whose bucket is created when it does not exist yet (docs/deploy.md).
 */
export async function openScanStorage(
  config: Pick<Config, 's3' | 'scanStorageDir'>,
  logger: Logger,
): Promise<OpenedStorage> {
  if (!config.s3) {
    return {
      storage: createLocalScanStorage(config.scanStorageDir),
      driver: 'disk',
      ping: () => Promise.resolve(),
      close: () => undefined,
    };
  }
  const client = createS3Client(config.s3);
  const Bucket = config.s3.bucket;
  try {
    await client.send(new HeadBucketCommand({ Bucket }));
  } catch (err) {
    const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
    if (status !== 404) {
      client.destroy();
      throw new Error(
        `S3 bucket "${Bucket}" cannot be reached: ${(err as Error).name ?? 'error'} ${status ?? ''}`.trim(),
      );
    }
    await client.send(new CreateBucketCommand({ Bucket }));
    logger.info({ bucket: Bucket }, 'created the S3 bucket');
  }
  return {
    storage: createS3ScanStorage(client, { bucket: Bucket, prefix: config.s3.prefix }),
    driver: 's3',
    ping: async () => {
      await client.send(new HeadBucketCommand({ Bucket }));
    },
    close: () => client.destroy(),
  };
}
