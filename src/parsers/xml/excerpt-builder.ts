/**
 * Re-serialises the events of one record into XML, stopping at a byte bound. Cheaper than keeping
 * the decoded input around, and the excerpt is evidence, not a byte-exact copy: attribute order and
 * entity spelling may differ from the file.
 */
export class ExcerptBuilder {
  private parts: string[] = [];
  private size = 0;
  private full = false;

  constructor(
    private readonly maxBytes: number,
    private readonly marker: string,
  ) {}

  open(name: string, attrs: Record<string, string>): void {
    let tag = `<${name}`;
    for (const key in attrs) tag += ` ${key}="${escapeXml(attrs[key]!, true)}"`;
    this.push(`${tag}>`);
  }

  close(name: string): void {
    this.push(`</${name}>`);
  }

  text(text: string): void {
    this.push(escapeXml(text, false));
  }

  finish(): string {
    return this.parts.join('') + (this.full ? this.marker : '');
  }

  private push(piece: string): void {
    if (this.full) return;
    const room = this.maxBytes - Buffer.byteLength(this.marker, 'utf8') - this.size;
    const bytes = Buffer.byteLength(piece, 'utf8');
    if (bytes <= room) {
      this.parts.push(piece);
      this.size += bytes;
      return;
    }
    // Cut by characters; multi-byte text may leave the excerpt slightly under the bound, never over.
    let cut = piece.slice(0, Math.max(0, room));
    while (Buffer.byteLength(cut, 'utf8') > room) cut = cut.slice(0, -1);
    this.parts.push(cut);
    this.size += Buffer.byteLength(cut, 'utf8');
    this.full = true;
  }
}

function escapeXml(text: string, attr: boolean): string {
  const s = text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  return attr ? s.replace(/"/g, '&quot;') : s;
}
