import { defineFormat } from '../format-module.js';
import { parseOpenvas } from './parse.js';

/** OpenVAS / Greenbone report XML, bare or wrapped in a GMP `get_reports_response`. */
export const openvas = defineFormat({
  format: 'openvas',
  label: 'OpenVAS / Greenbone',
  listedAs: 'OpenVAS/Greenbone',
  aFile: 'an OpenVAS/Greenbone report',
  sniff: (head) =>
    head.xmlRoot?.name === 'report' || head.xmlRoot?.name === 'get_reports_response' ? 'sure' : null,
  parse: parseOpenvas,
});
