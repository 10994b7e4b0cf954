/**
 * Captures the raw text of one record (a ReportItem, a result, a VULN_INFO) as it appeared in the
 * decoded input, by slicing the strings already handed to the tokenizer. It replaces
 * re-serialising every event of the record, which cost more than a third of the extraction time
 * (bench/parsers/README.md), and it is byte-faithful: attribute order, whitespace and entity
 * spelling are the file's own.
 *
 * Offsets are absolute positions in the decoded text stream, in UTF-16 code units, which is what
 * both tokenizers report as their `position`. Only `maxChars` characters are kept; the caller
 * bounds the result in bytes (one character is at least one byte, so `maxBytes + 1` characters
 * always suffice to tell whether the record was cut).
 */
export class RawExcerpt {
  private readonly parts: string[] = [];
  private chars = 0;

  /**
   * @param from absolute position of the first character still to capture
   * @param maxChars capture bound
   * @param head text already captured (the open tag, when it had to be rebuilt)
   */
  constructor(
    private from: number,
    private readonly maxChars: number,
    head = '',
  ) {
    if (head !== '') this.append(head);
  }

  /** Captures `text[from - start .. to - start)` (clamped to `text`), where `text` begins at `start`. */
  take(text: string, start: number, to: number): void {
    if (this.chars >= this.maxChars) return;
    const end = Math.min(to, start + text.length);
    if (end <= this.from) return;
    const a = this.from - start;
    const b = Math.min(end - start, a + (this.maxChars - this.chars));
    if (a >= 0 && b > a) this.append(a === 0 && b === text.length ? text : text.slice(a, b));
    this.from = end;
  }

  /** The captured text, at most `maxChars` characters. */
  finish(): string {
    return this.parts.length === 1 ? this.parts[0]! : this.parts.join('');
  }

  private append(piece: string): void {
    const room = this.maxChars - this.chars;
    const p = piece.length > room ? piece.slice(0, room) : piece;
    this.parts.push(p);
    this.chars += p.length;
  }
}

/** Rebuilds an open tag from its name and attributes (used only when its raw text is gone). */
export function serialiseOpenTag(name: string, attrs: Record<string, string>): string {
  let tag = `<${name}`;
  for (const key in attrs) tag += ` ${key}="${escapeAttr(attrs[key]!)}"`;
  return `${tag}>`;
}

function escapeAttr(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
