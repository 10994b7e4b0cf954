import { defineFormat } from '../format-module.js';
import { parseQualys } from './parse.js';

/** The root elements of the three Qualys reports read: scan, asset data, and VM detections. */
const ROOTS = new Set(['SCAN', 'ASSET_DATA_REPORT', 'HOST_LIST_VM_DETECTION_OUTPUT']);

/** Qualys VM reports. */
export const qualys = defineFormat({
  format: 'qualys',
  label: 'Qualys',
  listedAs: 'Qualys',
  aFile: 'a Qualys report',
  sniff: (head) => (head.xmlRoot && ROOTS.has(head.xmlRoot.name) ? 'sure' : null),
  parse: parseQualys,
});
