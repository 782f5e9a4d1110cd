/**
 * A DOCX that is a ZIP bomb: `word/document.xml` deflates from `expandedBytes` of one repeated
 * paragraph to a few hundred KB (a thousand to one). Written by hand (local headers, central
 * directory), with the true sizes and CRCs in its headers, as any ZIP tool would write it.
 */
import * as zlib from "node:zlib"

const crcTable = (() => {
  const table = new Int32Array(256)
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
    table[n] = c
  }
  return table
})()

const crc32 = (bytes: Uint8Array): number => {
  let crc = -1
  for (let i = 0; i < bytes.length; i++) crc = crcTable[(crc ^ bytes[i]!) & 0xff]! ^ (crc >>> 8)
  return (crc ^ -1) >>> 0
}

interface Entry {
  readonly name: string
  readonly compressed: Buffer
  readonly crc: number
  readonly size: number
}

const entry = (name: string, bytes: Buffer): Entry => ({
  name,
  compressed: zlib.deflateRawSync(bytes, { level: 9 }),
  crc: crc32(bytes),
  size: bytes.length
})

const u16 = (n: number) => {
  const b = Buffer.alloc(2)
  b.writeUInt16LE(n)
  return b
}
const u32 = (n: number) => {
  const b = Buffer.alloc(4)
  b.writeUInt32LE(n >>> 0)
  return b
}

const zip = (entries: ReadonlyArray<Entry>): Buffer => {
  const locals: Array<Buffer> = []
  const centrals: Array<Buffer> = []
  let offset = 0
  for (const e of entries) {
    const name = Buffer.from(e.name)
    const common = [u16(20), u16(0), u16(8), u16(0), u16(0x21), u32(e.crc), u32(e.compressed.length), u32(e.size), u16(name.length), u16(0)]
    const local = Buffer.concat([u32(0x04034b50), ...common, name, e.compressed])
    centrals.push(Buffer.concat([u32(0x02014b50), u16(20), ...common, u16(0), u16(0), u16(0), u32(0), u32(offset), name]))
    locals.push(local)
    offset += local.length
  }
  const central = Buffer.concat(centrals)
  const end = Buffer.concat([u32(0x06054b50), u16(0), u16(0), u16(entries.length), u16(entries.length), u32(central.length), u32(offset), u16(0)])
  return Buffer.concat([...locals, central, end])
}

const contentTypes = `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`
const rels = `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`


/** A DOCX whose document part expands to about `expandedBytes` (the test holds them once, briefly). */
export const docxBomb = (expandedBytes: number): Buffer => {
  const head = `<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>`
  const tail = "</w:body></w:document>"
  const paragraph = Buffer.from(`<w:p><w:r><w:t>${"A".repeat(1000)}</w:t></w:r></w:p>`)
  const count = Math.max(1, Math.floor(expandedBytes / paragraph.length))
  const body = Buffer.alloc(count * paragraph.length, paragraph)
  const document = Buffer.concat([Buffer.from(head), body, Buffer.from(tail)])
  return zip([
    entry("[Content_Types].xml", Buffer.from(contentTypes)),
    entry("_rels/.rels", Buffer.from(rels)),
    entry("word/document.xml", document)
  ])
}
