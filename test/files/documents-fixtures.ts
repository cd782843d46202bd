import zlib from 'node:zlib';

/*
 * Documents made by the specs themselves (no binary fixture is shipped): a PDF written object by
 * object, a DOCX as the zip of its three required parts, and hostile variants of both.
 */

/** A PDF whose page i shows the line `pages[i]` (ASCII, no parentheses or backslashes). */
export const pdfOf = (pages: readonly string[]) => {
  const objects: string[] = [];
  objects[1] = '<< /Type /Catalog /Pages 2 0 R >>';
  objects[2] = `<< /Type /Pages /Kids [${pages.map((_, i) => `${4 + 2 * i} 0 R`).join(' ')}] /Count ${pages.length} >>`;
  objects[3] = '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>';
  pages.forEach((text, i) => {
    const stream = `BT /F1 12 Tf 72 720 Td (${text}) Tj ET`;
    objects[4 + 2 * i] =
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${5 + 2 * i} 0 R >>`;
    objects[5 + 2 * i] = `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`;
  });
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  for (let i = 1; i < objects.length; i++) {
    offsets.push(out.length);
    out += `${i} 0 obj\n${objects[i]}\nendobj\n`;
  }
  const xref = out.length;
  out += `xref\n0 ${objects.length}\n0000000000 65535 f \n`;
  out += offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('');
  out += `trailer\n<< /Size ${objects.length} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
};

type ZipEntry = {
  name: string;
  /** The deflated bytes as stored (made by `deflated`, or a hand-made stream). */
  data: Buffer;
  /** The size and CRC the headers declare. */
  size: number;
  crc: number;
};

export const deflated = (name: string, content: string | Buffer): ZipEntry => {
  const bytes = Buffer.isBuffer(content) ? content : Buffer.from(content, 'utf8');
  return { name, data: zlib.deflateRawSync(bytes), size: bytes.length, crc: zlib.crc32(bytes) };
};

/** A zip archive of deflated entries (local headers, data, central directory, end record). */
export const zipOf = (entries: readonly ZipEntry[]) => {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.from(e.name, 'utf8');
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(8, 8);
    local.writeUInt32LE(e.crc, 14);
    local.writeUInt32LE(e.data.length, 18);
    local.writeUInt32LE(e.size, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(8, 10);
    central.writeUInt32LE(e.crc, 16);
    central.writeUInt32LE(e.data.length, 20);
    central.writeUInt32LE(e.size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, e.data);
    centrals.push(central, name);
    offset += 30 + name.length + e.data.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
};

const CONTENT_TYPES = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`;
const RELS = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`;

const escapeXml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** A DOCX's package around a given `word/document.xml` entry. */
export const docxAround = (document: ZipEntry) =>
  zipOf([deflated('[Content_Types].xml', CONTENT_TYPES), deflated('_rels/.rels', RELS), document]);

/** A DOCX of paragraphs; a paragraph given as `# text` is a Heading 1 (mammoth: an `<h1>`). */
export const docxOf = (paragraphs: readonly string[]) => {
  const body = paragraphs
    .map((p) =>
      p.startsWith('# ')
        ? `<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>${escapeXml(p.slice(2))}</w:t></w:r></w:p>`
        : `<w:p><w:r><w:t>${escapeXml(p)}</w:t></w:r></w:p>`,
    )
    .join('');
  return docxAround(
    deflated(
      'word/document.xml',
      `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>${body}</w:body></w:document>`,
    ),
  );
};

/**
 * A DOCX whose document.xml inflates to `gib` GiB of spaces from a few MiB: one 16 MiB deflate
 * block (a full flush, so it stands alone) repeated, then an empty final block. `declaredSize`:
 * what the headers say it inflates to (the truth, capped at 32 bits, or a lie).
 */
export const docxBomb = (gib: number, declaredSize: 'honest' | 'lying') => {
  const chunk = 16 * 1024 * 1024;
  const deflater = zlib.deflateRawSync(Buffer.alloc(chunk, 0x20), {
    finishFlush: zlib.constants.Z_FULL_FLUSH,
  });
  const repeats = (gib * 1024 * 1024 * 1024) / chunk;
  const final = Buffer.from([0x03, 0x00]);
  const data = Buffer.concat([...Array.from({ length: repeats }, () => deflater), final]);
  const size = declaredSize === 'honest' ? Math.min(repeats * chunk, 0xfffffffe) : 1024;
  return docxAround({ name: 'word/document.xml', data, size, crc: 0 });
};
