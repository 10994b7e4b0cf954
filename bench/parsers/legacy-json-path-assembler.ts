import { unparseable } from '../../src/parsers/parse-error.js';
import { formatSize, type JsonToken } from '../../src/parsers/json/json-tokenizer.js';

/** Path of a JSON value: object keys and array indices from the root. */
export type JsonPath = readonly (string | number)[];

interface Frame {
  kind: 'object' | 'array';
  key: string | number | null;
}

/** Callbacks of {@link JsonPathAssembler}. */
export interface JsonPathHandlers {
  /**
   * Truthy to have the value at `path` assembled and passed to `onValue` (a record picker of the
   * new scanner counts as true here: this walker always assembles the whole value).
   */
  select(path: JsonPath): boolean | object;
  onValue(path: JsonPath, value: unknown): void;
  /** Called when an object or array that was not assembled closes. */
  onContainerEnd?(path: JsonPath): void;
}

/**
 * Walks a token stream keeping only the current path, and assembles just the values the caller
 * selects (a SARIF result, a CycloneDX vulnerability). Everything else is skipped token by token,
 * so memory is the largest selected value, not the document. Selected values are bounded by
 * `maxValueChars` (sum of string lengths) to stop one hostile record from exhausting memory.
 */
export class JsonPathAssembler {
  // Objects are built without a prototype so a "__proto__" key is plain data.
  private readonly frames: Frame[] = [];
  private assembling: {
    path: JsonPath;
    stack: unknown[];
    keys: (string | null)[];
    root: unknown;
    chars: number;
  } | null = null;

  constructor(
    private readonly handlers: JsonPathHandlers,
    private readonly maxValueChars: number,
    private readonly maxDepth: number,
  ) {}

  /** Deep nesting is never legitimate in scan formats and would make path tracking quadratic. */
  private checkDepth(depth: number): void {
    if (depth > this.maxDepth)
      throw unparseable(`JSON nesting is deeper than the limit of ${this.maxDepth} levels.`);
  }

  /** Path of the value about to start (or the current container). */
  private currentPath(): (string | number)[] {
    return this.frames.map((f) => f.key).filter((k): k is string | number => k !== null);
  }

  push(token: JsonToken): void {
    if (this.assembling) {
      this.assemble(token);
      return;
    }
    switch (token.name) {
      case 'keyValue':
        this.frames[this.frames.length - 1]!.key = token.value;
        return;
      case 'endObject':
      case 'endArray': {
        this.frames.pop();
        const path = this.currentPath();
        this.handlers.onContainerEnd?.(path);
        return;
      }
      default:
        break;
    }
    // A value starts here: advance the array index if we are in an array.
    const top = this.frames[this.frames.length - 1];
    if (top?.kind === 'array') top.key = top.key === null ? 0 : (top.key as number) + 1;
    const path = this.currentPath();
    if (this.handlers.select(path)) {
      this.assembling = { path, stack: [], keys: [], root: undefined, chars: 0 };
      this.assemble(token);
      return;
    }
    if (token.name === 'startObject') this.frames.push({ kind: 'object', key: null });
    else if (token.name === 'startArray') this.frames.push({ kind: 'array', key: null });
    this.checkDepth(this.frames.length);
  }

  private assemble(token: JsonToken): void {
    const a = this.assembling!;
    switch (token.name) {
      case 'startObject':
        this.addValue(Object.create(null) as Record<string, unknown>);
        return;
      case 'startArray':
        this.addValue([]);
        return;
      case 'endObject':
      case 'endArray':
        a.stack.pop();
        a.keys.pop();
        if (a.stack.length === 0) this.finishValue();
        return;
      case 'keyValue':
        a.keys[a.keys.length - 1] = token.value;
        a.chars += token.value.length;
        return;
      case 'stringValue':
        a.chars += token.value.length;
        this.addValue(token.value);
        return;
      case 'numberValue':
        this.addValue(Number(token.value));
        return;
      case 'nullValue':
      case 'trueValue':
      case 'falseValue':
        this.addValue(token.value);
        return;
      default:
        return;
    }
  }

  private addValue(value: unknown): void {
    const a = this.assembling!;
    if (a.chars > this.maxValueChars) {
      throw unparseable(
        `A JSON record at ${a.path.join('.')} is larger than the ${formatSize(this.maxValueChars)} limit.`,
      );
    }
    const container = typeof value === 'object' && value !== null;
    if (a.stack.length === 0) {
      a.root = value;
    } else {
      const parent = a.stack[a.stack.length - 1];
      if (Array.isArray(parent)) parent.push(value);
      else (parent as Record<string, unknown>)[a.keys[a.keys.length - 1] ?? ''] = value;
    }
    if (container) {
      a.stack.push(value);
      a.keys.push(null);
      this.checkDepth(this.frames.length + a.stack.length);
    } else if (a.stack.length === 0) {
      this.finishValue();
    }
  }

  private finishValue(): void {
    const a = this.assembling!;
    this.assembling = null;
    this.handlers.onValue(a.path, a.root);
  }
}
