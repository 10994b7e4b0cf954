/** The parts of a SARIF reportingDescriptor we read. */
export interface SarifRule {
  id?: string;
  name?: string;
  shortDescription?: { text?: string };
  fullDescription?: { text?: string };
  help?: { text?: string };
  defaultConfiguration?: { level?: string };
  properties?: Record<string, unknown>;
  relationships?: unknown[];
  messageStrings?: Record<string, { text?: string }>;
}

/** The parts of a SARIF tool we read. */
export interface SarifTool {
  driver?: { name?: string; rules?: SarifRule[] };
  extensions?: { name?: string; rules?: SarifRule[] }[];
}

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {});

/**
 * Rules of one run, from the driver and every extension (docs/ingestion.md#formats). A result names its rule
 * by `rule.toolComponent.index` + `rule.index`, by `ruleIndex` (driver), or by `ruleId`; we try
 * them in that order because ids are not unique across components.
 */
export class SarifRuleIndex {
  private readonly driver: SarifRule[];
  private readonly extensions: SarifRule[][];
  private readonly byId = new Map<string, SarifRule>();

  constructor(tool: SarifTool) {
    this.driver = Array.isArray(tool.driver?.rules) ? tool.driver.rules : [];
    this.extensions = (Array.isArray(tool.extensions) ? tool.extensions : []).map((e) =>
      Array.isArray(e.rules) ? e.rules : [],
    );
    for (const rules of [this.driver, ...this.extensions]) {
      for (const r of rules) if (typeof r.id === 'string' && !this.byId.has(r.id)) this.byId.set(r.id, r);
    }
  }

  find(result: Obj): SarifRule {
    const ref = obj(result.rule);
    const component = obj(ref.toolComponent);
    const index =
      typeof ref.index === 'number'
        ? ref.index
        : typeof result.ruleIndex === 'number'
          ? result.ruleIndex
          : -1;
    if (typeof component.index === 'number') {
      const rule = this.extensions[component.index]?.[index];
      if (rule) return rule;
    } else if (index >= 0 && this.driver[index]) {
      return this.driver[index]!;
    }
    const id = typeof result.ruleId === 'string' ? result.ruleId : typeof ref.id === 'string' ? ref.id : null;
    // Hierarchical ids ("C2001/sub") fall back to their base rule.
    return (id && (this.byId.get(id) ?? this.byId.get(id.split('/')[0]!))) || {};
  }
}

/** A result message's text, or its `id` resolved against the rule's messageStrings with {0} arguments. */
export function sarifMessage(message: Obj, rule: SarifRule): string | null {
  if (typeof message.text === 'string' && message.text.trim() !== '') return message.text;
  const id = typeof message.id === 'string' ? message.id : null;
  const template = id ? rule.messageStrings?.[id]?.text : undefined;
  if (!template) return null;
  const args = Array.isArray(message.arguments) ? message.arguments.map(String) : [];
  return template.replace(/\{(\d+)\}/g, (m, i: string) => args[Number(i)] ?? m);
}
