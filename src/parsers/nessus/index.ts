import { defineFormat } from '../format-module.js';
import { parseNessus } from './parse.js';

/** Nessus v2 (`.nessus`) reports. */
export const nessus = defineFormat({
  format: 'nessus',
  label: 'Nessus',
  listedAs: 'Nessus v2',
  aFile: 'a Nessus v2 report',
  sniff: (head) => (head.xmlRoot?.name === 'NessusClientData_v2' ? 'sure' : null),
  parse: parseNessus,
});
