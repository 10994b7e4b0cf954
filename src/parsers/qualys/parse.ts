import type { FormatParser, ParserContext } from '../format-parser.js';
import { QualysAssetHandler } from './asset.js';
import { QualysDetectionHandler } from './detection.js';
import { QualysScanHandler } from './scan.js';
import type { FindingDraft } from '../types.js';
import { walkXml } from '../xml/walk-xml.js';
import type { XmlHandler, XmlWalker } from '../xml/xml-walker.js';

/**
 * Qualys ships three XML report types under one format name; the root element picks the handler.
 * The DOCTYPE each one carries points at a remote DTD that is never fetched.
 */
class QualysHandler implements XmlHandler {
  readonly roots = ['SCAN', 'ASSET_DATA_REPORT', 'HOST_LIST_VM_DETECTION_OUTPUT'];
  private delegate: XmlHandler | null = null;
  private pending: FindingDraft[] = [];

  constructor(private readonly ctx: ParserContext) {}

  get out(): FindingDraft[] {
    return this.delegate?.out ?? this.pending;
  }

  set out(value: FindingDraft[]) {
    if (this.delegate) this.delegate.out = value;
    else this.pending = value;
  }

  open(name: string, attrs: Record<string, string>, path: readonly string[], walker: XmlWalker): void {
    if (path.length === 1) {
      this.delegate =
        name === 'SCAN'
          ? new QualysScanHandler(this.ctx.scope)
          : name === 'ASSET_DATA_REPORT'
            ? new QualysAssetHandler(this.ctx)
            : new QualysDetectionHandler(this.ctx.scope);
    }
    this.delegate?.open(name, attrs, path, walker);
  }

  close(name: string, text: string, path: readonly string[], walker: XmlWalker): void {
    this.delegate?.close(name, text, path, walker);
  }

  async afterChunk(): Promise<void> {
    await this.delegate?.afterChunk?.();
  }

  async *finish(): AsyncGenerator<FindingDraft[], void, undefined> {
    if (this.delegate?.finish) yield* this.delegate.finish();
  }

  async dispose(): Promise<void> {
    await this.delegate?.dispose?.();
  }
}

/** Parses a Qualys scan report, asset data report or host detection list. */
export const parseQualys: FormatParser = (chunks, ctx) => walkXml(chunks, new QualysHandler(ctx), ctx);
