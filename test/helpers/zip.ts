// ZIP archives built byte by byte (hostile ones can say whatever their headers like) and Excel
// workbooks in them, for the extractor tests and the benchmarks' generated files. No vitest here:
// bench/ imports it.
import { crc32, deflateRawSync } from 'node:zlib';

export interface ZipEntrySpec {
  name: string;
  /** Stored deflated unless `stored`. */
  data?: Buffer | string;
  /** Already-deflated bytes, written as they are (for bombs built without inflating them first). */
  deflated?: Buffer;
  /** What the headers claim the inflated size is; defaults to the truth where known. */
  claimedSize?: number;
  stored?: boolean;
  /** Sets the "encrypted" flag (bit 0); the bytes stay as they are. */
  encrypted?: boolean;
}

/** A ZIP archive (no ZIP64, no data descriptors) built byte by byte. */
export function makeZip(entries: ZipEntrySpec[]): Buffer {
  const local: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name, 'utf8');
    const data = entry.data === undefined ? null : Buffer.from(entry.data);
    const stored = entry.stored === true;
    const body = entry.deflated ?? (stored ? data! : deflateRawSync(data ?? Buffer.alloc(0)));
    const crc = data ? crc32(data) : 0;
    const size = entry.claimedSize ?? data?.length ?? 0;
    const method = stored ? 0 : 8;
    const flags = 0x0800 | (entry.encrypted ? 1 : 0); // UTF-8 names

    const header = Buffer.alloc(30);
    header.writeUInt32LE(0x04034b50, 0);
    header.writeUInt16LE(20, 4);
    header.writeUInt16LE(flags, 6);
    header.writeUInt16LE(method, 8);
    header.writeUInt32LE(crc, 14);
    header.writeUInt32LE(body.length, 18);
    header.writeUInt32LE(size, 22);
    header.writeUInt16LE(name.length, 26);
    local.push(header, name, body);

    const record = Buffer.alloc(46);
    record.writeUInt32LE(0x02014b50, 0);
    record.writeUInt16LE(20, 4);
    record.writeUInt16LE(20, 6);
    record.writeUInt16LE(flags, 8);
    record.writeUInt16LE(method, 10);
    record.writeUInt32LE(crc, 16);
    record.writeUInt32LE(body.length, 20);
    record.writeUInt32LE(size, 24);
    record.writeUInt16LE(name.length, 28);
    record.writeUInt32LE(offset, 42);
    central.push(record, name);
    offset += header.length + name.length + body.length;
  }
  const directory = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(Math.min(entries.length, 0xffff), 8);
  end.writeUInt16LE(Math.min(entries.length, 0xffff), 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...local, directory, end]);
}

const SML = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"';
const REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';

export interface WorkbookSpec {
  /** Each sheet's <sheetData> content (rows of cells, as XML); null for a chart sheet. */
  sheets: { name: string; rows: string | null }[];
  /** The shared string table's <si> elements, as XML. */
  sharedStrings?: string[];
  /** styles.xml's <numFmts> and <cellXfs> content. */
  numFmts?: string;
  cellXfs?: string;
  date1904?: boolean;
}

/** An Excel workbook's parts, as a spreadsheet program writes them (with a prolog, namespaces and relationships). */
export function workbookEntries(spec: WorkbookSpec): ZipEntrySpec[] {
  const prolog = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';
  const sheets = spec.sheets
    .map((sheet, i) => `<sheet name="${sheet.name}" sheetId="${i + 1}" r:id="rId${i + 1}"/>`)
    .join('');
  const relationships = spec.sheets.map((sheet, i) =>
    sheet.rows === null
      ? `<Relationship Id="rId${i + 1}" Type="${REL}/chartsheet" Target="chartsheets/sheet${i + 1}.xml"/>`
      : `<Relationship Id="rId${i + 1}" Type="${REL}/worksheet" Target="worksheets/sheet${i + 1}.xml"/>`,
  );
  relationships.push(
    `<Relationship Id="rIdS" Type="${REL}/sharedStrings" Target="sharedStrings.xml"/>`,
    `<Relationship Id="rIdT" Type="${REL}/styles" Target="/xl/styles.xml"/>`,
  );
  const strings = spec.sharedStrings ?? [];
  return [
    {
      name: '[Content_Types].xml',
      data: `${prolog}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>`,
    },
    {
      name: 'xl/workbook.xml',
      data: `${prolog}<workbook ${SML} xmlns:r="${REL}"><workbookPr${spec.date1904 ? ' date1904="1"' : ''}/><sheets>${sheets}</sheets></workbook>`,
    },
    {
      name: 'xl/_rels/workbook.xml.rels',
      data: `${prolog}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">${relationships.join('')}</Relationships>`,
    },
    {
      name: 'xl/sharedStrings.xml',
      data: `${prolog}<sst ${SML} count="${strings.length}" uniqueCount="${strings.length}">${strings.join('')}</sst>`,
    },
    {
      name: 'xl/styles.xml',
      data: `${prolog}<styleSheet ${SML}><numFmts>${spec.numFmts ?? ''}</numFmts><cellStyleXfs><xf numFmtId="14"/></cellStyleXfs><cellXfs>${spec.cellXfs ?? '<xf numFmtId="0"/>'}</cellXfs></styleSheet>`,
    },
    ...spec.sheets.flatMap((sheet, i): ZipEntrySpec[] =>
      sheet.rows === null
        ? [{ name: `xl/chartsheets/sheet${i + 1}.xml`, data: `${prolog}<chartsheet ${SML}/>` }]
        : [
            {
              name: `xl/worksheets/sheet${i + 1}.xml`,
              data: `${prolog}<worksheet ${SML}><dimension ref="A1"/><sheetData>${sheet.rows}</sheetData></worksheet>`,
            },
          ],
    ),
  ];
}
