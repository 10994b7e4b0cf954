import { EXPORT_FORMATS } from '../../domain/exports/formats.js';
import { isoDateTime, nullableDateTime } from './responses.js';

/** Response shapes of the export routes (docs/exports.md). */

export const exportView = {
  description: 'An export job; `downloadUrl` is a signed link once it has completed.',
  type: 'object',
  required: ['object', 'id', 'subject', 'format', 'status', 'statusUrl', 'downloadUrl'],
  properties: {
    object: { type: 'string', const: 'export' },
    id: { type: 'string', format: 'uuid' },
    subject: { type: 'string', enum: ['cases', 'findings'] },
    format: { type: 'string', enum: [...EXPORT_FORMATS] },
    filter: { type: 'object' },
    status: { type: 'string', enum: ['queued', 'running', 'completed', 'failed'] },
    rowsTotal: { type: ['integer', 'null'] },
    rowsWritten: { type: 'integer' },
    bytes: { type: ['integer', 'null'] },
    error: { type: ['string', 'null'] },
    createdAt: isoDateTime,
    finishedAt: nullableDateTime,
    expiresAt: isoDateTime,
    statusUrl: { type: 'string' },
    downloadUrl: { type: ['string', 'null'], description: 'Works for 24 h without the API key, then 410.' },
  },
} as const;

const file = { type: 'string' } as const;

/** A streamed export file, in the media type of its format (`Content-Disposition: attachment`). */
export function exportFile(formats: 'cases' | 'findings') {
  return {
    description: 'The export file, streamed.',
    content: {
      'text/csv': { schema: file },
      'application/x-ndjson': { schema: file },
      ...(formats === 'cases'
        ? {
            'application/sarif+json': { schema: { type: 'object', description: 'SARIF 2.1.0' } },
            'application/vnd.cyclonedx+json': {
              schema: { type: 'object', description: 'CycloneDX 1.6 VEX' },
            },
          }
        : {}),
    },
  };
}
