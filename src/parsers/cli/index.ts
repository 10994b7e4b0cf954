import { defineFormat } from '../format-module.js';
import { parseCli } from './parse.js';
import { sniffCli } from './sniff.js';

/** The service's own CLI findings, as a JSON document or JSON Lines. */
export const cli = defineFormat({
  format: 'cli',
  label: 'CLI findings (JSON / JSON Lines)',
  listedAs: 'CLI findings JSON/JSON Lines',
  aFile: 'CLI findings',
  sniff: sniffCli,
  parse: parseCli,
});
