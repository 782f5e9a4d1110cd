/**
 * Documents made by the tests: a real PDF (one page per entry, Helvetica text objects, a
 * document information dictionary with a title, a cross-reference table with exact offsets) and
 * a real DOCX (the WordprocessingML parts Word writes, zipped with JSZip; headings use Word's
 * built-in Heading styles, which mammoth maps to <h1>/<h2>).
 */
import JSZip from "jszip"

const pdfString = (text: string) => `(${text.replace(/[\\()]/g, (c) => `\\${c}`)})`

/** A PDF whose pages hold the given lines of text. */
export const makePdf = (pages: ReadonlyArray<ReadonlyArray<string>>, title?: string): Uint8Array => {
  const objects: Array<string> = []
  const pageIds = pages.map((_, i) => 5 + i * 2)
  objects[1] = "<< /Type /Catalog /Pages 2 0 R >>"
  objects[2] = `<< /Type /Pages /Kids [${pageIds.map((id) => `${id} 0 R`).join(" ")}] /Count ${pages.length} >>`
  objects[3] = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
  objects[4] = title === undefined ? "<< /Producer (assistant tests) >>" : `<< /Title ${pdfString(title)} /Producer (assistant tests) >>`
  pages.forEach((lines, i) => {
    const content = ["BT", "/F1 11 Tf", "14 TL", "72 740 Td", ...lines.map((line) => `${pdfString(line)} Tj T*`), "ET"].join("\n")
    objects[pageIds[i]] =
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents ${pageIds[i] + 1} 0 R /Resources << /Font << /F1 3 0 R >> >> >>`
    objects[pageIds[i] + 1] = `<< /Length ${Buffer.byteLength(content, "latin1")} >>\nstream\n${content}\nendstream`
  })
  let out = "%PDF-1.4\n"
  const offsets: Array<number> = []
  for (let id = 1; id < objects.length; id++) {
    offsets[id] = Buffer.byteLength(out, "latin1")
    out += `${id} 0 obj\n${objects[id]}\nendobj\n`
  }
  const xref = Buffer.byteLength(out, "latin1")
  out += `xref\n0 ${objects.length}\n0000000000 65535 f \n`
  for (let id = 1; id < objects.length; id++) out += `${String(offsets[id]).padStart(10, "0")} 00000 n \n`
  out += `trailer\n<< /Size ${objects.length} /Root 1 0 R /Info 4 0 R >>\nstartxref\n${xref}\n%%EOF\n`
  return new Uint8Array(Buffer.from(out, "latin1"))
}

const xmlEscape = (text: string) => text.replace(/[<>&"]/g, (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", "\"": "&quot;" })[c] ?? c)

export type DocxParagraph = { readonly heading?: 1 | 2 | undefined; readonly text: string }

/** A DOCX with the given paragraphs (headings as Word's Heading 1/Heading 2). */
export const makeDocx = async (paragraphs: ReadonlyArray<DocxParagraph>): Promise<Uint8Array> => {
  const zip = new JSZip()
  zip.file(
    "[Content_Types].xml",
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">
  <Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>
  <Default Extension="xml" ContentType="application/xml"/>
  <Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>
</Types>`
  )
  zip.file(
    "_rels/.rels",
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">
  <Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/>
</Relationships>`
  )
  const body = paragraphs.map((p) =>
    `<w:p>${p.heading === undefined ? "" : `<w:pPr><w:pStyle w:val="Heading${p.heading}"/></w:pPr>`}` +
    `<w:r><w:t xml:space="preserve">${xmlEscape(p.text)}</w:t></w:r></w:p>`
  ).join("")
  zip.file(
    "word/document.xml",
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>${body}</w:body></w:document>`
  )
  return zip.generateAsync({ type: "uint8array" })
}

/** The first bytes of a PNG image (signature and IHDR chunk). */
export const pngBytes = new Uint8Array([
  0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
  0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4, 0x89
])
