// Character tables for the RE2 engine: Unicode general categories and scripts (`\pL`,
// `\p{Greek}`), simple case folding (`(?i)`), and the Perl and POSIX classes, all as sorted
// range lists `[lo0, hi0, lo1, hi1, ...]` as Go's regexp/syntax keeps them.
//
// Go ships its own Unicode tables; here they are derived, once and lazily, from the JavaScript
// engine's Unicode data (property escapes and case mappings), so the two agree up to the
// Unicode version each was built with.

/** A class as sorted, disjoint, non-adjacent inclusive ranges: [lo0, hi0, lo1, hi1, ...]. */
export type Ranges = readonly number[]

export const MAX_RUNE = 0x10ffff
/** The smallest and largest code points that take part in case folding (Go's minFold/maxFold). */
export const MIN_FOLD = 0x0041
export const MAX_FOLD = 0x1e943

// ---------------------------------------------------------------------------------------------
// Case folding

/** Fold orbits: each code point with fold-equivalents, to all members of its orbit (sorted). */
let orbits: Map<number, readonly number[]> | undefined
/** Every code point that has fold-equivalents, sorted. */
let foldable: Int32Array | undefined

const singleCodePoint = (s: string): number => {
  const cp = s.codePointAt(0) as number
  return s.length === (cp > 0xffff ? 2 : 1) ? cp : -1
}

/**
 * Builds the simple case folding orbits (what Go's unicode.SimpleFold iterates over): code points
 * are equivalent when one is the single-code-point lower or upper case of the other. Dotless i
 * (U+0131) is the one character whose upper case (I) is not a simple folding of it (Unicode
 * folds it only under Turkic rules), so it stays alone, as in Go.
 */
const buildOrbits = (): void => {
  const parent = new Map<number, number>()
  const find = (x: number): number => {
    let r = x
    for (let p = parent.get(r); p !== undefined; p = parent.get(r)) r = p
    for (let y = x, p = parent.get(y); p !== undefined && p !== r; p = parent.get(y)) {
      parent.set(y, r)
      y = p
    }
    return r
  }
  const cased = /\p{CWCM}/u
  for (let c = MIN_FOLD; c <= MAX_FOLD; c++) {
    if (c === 0x0131) continue
    const s = String.fromCodePoint(c)
    if (!cased.test(s)) continue
    for (const t of [s.toLowerCase(), s.toUpperCase()]) {
      const d = singleCodePoint(t)
      if (d < 0 || d === c || d === 0x0131) continue
      const a = find(c)
      const b = find(d)
      if (a !== b) parent.set(Math.max(a, b), Math.min(a, b))
    }
  }
  const groups = new Map<number, number[]>()
  for (const k of parent.keys()) {
    const r = find(k)
    let g = groups.get(r)
    if (g === undefined) groups.set(r, (g = [r]))
    g.push(k)
  }
  const map = new Map<number, readonly number[]>()
  for (const g of groups.values()) {
    g.sort((a, b) => a - b)
    for (const c of g) map.set(c, g)
  }
  orbits = map
  foldable = Int32Array.from([...map.keys()].sort((a, b) => a - b))
}

/** The fold orbit of c (c and every code point equivalent to it under simple case folding). */
export const foldOrbit = (c: number): readonly number[] | undefined => {
  if (c < MIN_FOLD || c > MAX_FOLD) return undefined
  if (orbits === undefined) buildOrbits()
  return (orbits as Map<number, readonly number[]>).get(c)
}

/** The smallest code point fold-equivalent to c (Go's minFoldRune). */
export const minFoldRune = (c: number): number => foldOrbit(c)?.[0] ?? c

// ---------------------------------------------------------------------------------------------
// Range lists

/** Appends lo-hi, merging with the last two ranges when they overlap or abut (Go's appendRange). */
export const appendRange = (r: number[], lo: number, hi: number): void => {
  const n = r.length
  for (let i = 2; i <= 4; i += 2) {
    if (n >= i) {
      const rlo = r[n - i]
      const rhi = r[n - i + 1]
      if (lo <= rhi + 1 && rlo <= hi + 1) {
        if (lo < rlo) r[n - i] = lo
        if (hi > rhi) r[n - i + 1] = hi
        return
      }
    }
  }
  r.push(lo, hi)
}

/** Appends lo-hi and every code point fold-equivalent to one in it. */
export const appendFoldedRange = (r: number[], lo: number, hi: number): void => {
  appendRange(r, lo, hi)
  if (hi < MIN_FOLD || lo > MAX_FOLD) return
  if (foldable === undefined) buildOrbits()
  const f = foldable as Int32Array
  // First foldable code point >= lo.
  let a = 0
  let b = f.length
  while (a < b) {
    const m = (a + b) >>> 1
    if (f[m] < lo) a = m + 1
    else b = m
  }
  for (let i = a; i < f.length && f[i] <= hi; i++) {
    for (const d of (orbits as Map<number, readonly number[]>).get(f[i]) as readonly number[]) appendRange(r, d, d)
  }
}

export const appendClass = (r: number[], x: ArrayLike<number>): void => {
  for (let i = 0; i < x.length; i += 2) appendRange(r, x[i], x[i + 1])
}

export const appendFoldedClass = (r: number[], x: ArrayLike<number>): void => {
  for (let i = 0; i < x.length; i += 2) appendFoldedRange(r, x[i], x[i + 1])
}

export const appendNegatedClass = (r: number[], x: ArrayLike<number>): void => {
  let nextLo = 0
  for (let i = 0; i < x.length; i += 2) {
    if (nextLo <= x[i] - 1) appendRange(r, nextLo, x[i] - 1)
    nextLo = x[i + 1] + 1
  }
  if (nextLo <= MAX_RUNE) appendRange(r, nextLo, MAX_RUNE)
}

/** Sorts and merges ranges (Go's cleanClass). */
export const cleanClass = (r: number[]): number[] => {
  const n = r.length / 2
  if (n < 2) return r
  const idx = Array.from({ length: n }, (_, i) => i)
  idx.sort((i, j) => r[2 * i] - r[2 * j] || r[2 * j + 1] - r[2 * i + 1])
  const out: number[] = [r[2 * idx[0]], r[2 * idx[0] + 1]]
  for (let k = 1; k < n; k++) {
    const lo = r[2 * idx[k]]
    const hi = r[2 * idx[k] + 1]
    const w = out.length
    if (lo <= out[w - 1] + 1) {
      if (hi > out[w - 1]) out[w - 1] = hi
      continue
    }
    out.push(lo, hi)
  }
  return out
}

/** The complement of a clean class (Go's negateClass). */
export const negateClass = (r: Ranges): number[] => {
  const out: number[] = []
  appendNegatedClass(out, r)
  return out
}

// ---------------------------------------------------------------------------------------------
// Unicode categories and scripts

/** Unicode script names Go's unicode.Scripts knows (kept when the JavaScript engine knows them too). */
const SCRIPTS =
  "Adlam Ahom Anatolian_Hieroglyphs Arabic Armenian Avestan Balinese Bamum Bassa_Vah Batak Bengali Bhaiksuki Bopomofo Brahmi Braille Buginese Buhid Canadian_Aboriginal Carian Caucasian_Albanian Chakma Cham Cherokee Chorasmian Common Coptic Cuneiform Cypriot Cypro_Minoan Cyrillic Deseret Devanagari Dives_Akuru Dogra Duployan Egyptian_Hieroglyphs Elbasan Elymaic Ethiopic Garay Georgian Glagolitic Gothic Grantha Greek Gujarati Gunjala_Gondi Gurmukhi Gurung_Khema Han Hangul Hanifi_Rohingya Hanunoo Hatran Hebrew Hiragana Imperial_Aramaic Inherited Inscriptional_Pahlavi Inscriptional_Parthian Javanese Kaithi Kannada Katakana Kawi Kayah_Li Kharoshthi Khitan_Small_Script Khmer Khojki Khudawadi Kirat_Rai Lao Latin Lepcha Limbu Linear_A Linear_B Lisu Lycian Lydian Mahajani Makasar Malayalam Mandaic Manichaean Marchen Masaram_Gondi Medefaidrin Meetei_Mayek Mende_Kikakui Meroitic_Cursive Meroitic_Hieroglyphs Miao Modi Mongolian Mro Multani Myanmar Nabataean Nag_Mundari Nandinagari New_Tai_Lue Newa Nko Nushu Nyiakeng_Puachue_Hmong Ogham Ol_Chiki Ol_Onal Old_Hungarian Old_Italic Old_North_Arabian Old_Permic Old_Persian Old_Sogdian Old_South_Arabian Old_Turkic Old_Uyghur Oriya Osage Osmanya Pahawh_Hmong Palmyrene Pau_Cin_Hau Phags_Pa Phoenician Psalter_Pahlavi Rejang Runic Samaritan Saurashtra Sharada Shavian Siddham SignWriting Sinhala Sogdian Sora_Sompeng Soyombo Sundanese Sunuwar Syloti_Nagri Syriac Tagalog Tagbanwa Tai_Le Tai_Tham Tai_Viet Takri Tamil Tangsa Tangut Telugu Thaana Thai Tibetan Tifinagh Tirhuta Todhri Toto Tulu_Tigalari Ugaritic Vai Vithkuqi Wancho Warang_Citi Yezidi Yi Zanabazar_Square".split(
    " "
  )

const CATEGORIES = "L Lu Ll Lt Lm Lo LC M Mn Mc Me N Nd Nl No P Pc Pd Ps Pe Pi Pf Po S Sm Sc Sk So Z Zs Zl Zp C Cc Cf Co Cs Cn".split(" ")

/** Long names of the general categories (Unicode's PropertyValueAliases, as Go's unicode.CategoryAliases). */
const CATEGORY_ALIASES: Readonly<Record<string, string>> = {
  Other: "C",
  Control: "Cc",
  cntrl: "Cc",
  Format: "Cf",
  Unassigned: "Cn",
  Private_Use: "Co",
  Surrogate: "Cs",
  Letter: "L",
  Cased_Letter: "LC",
  Lowercase_Letter: "Ll",
  Modifier_Letter: "Lm",
  Other_Letter: "Lo",
  Titlecase_Letter: "Lt",
  Uppercase_Letter: "Lu",
  Mark: "M",
  Combining_Mark: "M",
  Spacing_Mark: "Mc",
  Enclosing_Mark: "Me",
  Nonspacing_Mark: "Mn",
  Number: "N",
  Decimal_Number: "Nd",
  digit: "Nd",
  Letter_Number: "Nl",
  Other_Number: "No",
  Punctuation: "P",
  punct: "P",
  Connector_Punctuation: "Pc",
  Dash_Punctuation: "Pd",
  Close_Punctuation: "Pe",
  Final_Punctuation: "Pf",
  Initial_Punctuation: "Pi",
  Other_Punctuation: "Po",
  Open_Punctuation: "Ps",
  Symbol: "S",
  Currency_Symbol: "Sc",
  Modifier_Symbol: "Sk",
  Math_Symbol: "Sm",
  Other_Symbol: "So",
  Separator: "Z",
  Line_Separator: "Zl",
  Paragraph_Separator: "Zp",
  Space_Separator: "Zs"
}

/**
 * Go's canonicalName: a leading upper-case letter, then lower case, without `_`, `-` or spaces,
 * so that `\p{greek}`, `\p{Uppercase_Letter}` and `\p{upper case-letter}` are all accepted.
 */
export const canonicalName = (name: string): string => {
  let out = ""
  let first = true
  for (const ch of name) {
    if (ch === "_" || ch === "-" || ch === " ") continue
    if (first) {
      out += ch >= "a" && ch <= "z" ? ch.toUpperCase() : ch
      first = false
    } else out += ch >= "A" && ch <= "Z" ? ch.toLowerCase() : ch
  }
  return out
}

/**
 * Every code point except surrogates, in order, as one string (4 MB), scanned by property
 * regexps. Only needed while tables are built: held weakly, so that it is shared by the tables
 * one pattern needs and collected afterwards.
 */
let allCodePoints: WeakRef<{ text: string }> | undefined

const codePointText = (): string => {
  const held = allCodePoints?.deref()
  if (held !== undefined) return held.text
  const u = new Uint16Array(0x10000 - 0x800 + (MAX_RUNE + 1 - 0x10000) * 2)
  let j = 0
  for (let c = 0; c < 0xd800; c++) u[j++] = c
  for (let c = 0xe000; c < 0x10000; c++) u[j++] = c
  for (let c = 0x10000; c <= MAX_RUNE; c++) {
    const x = c - 0x10000
    u[j++] = 0xd800 + (x >> 10)
    u[j++] = 0xdc00 + (x & 0x3ff)
  }
  const box = { text: new TextDecoder("utf-16le").decode(u) }
  allCodePoints = new WeakRef(box)
  return box.text
}

/** The code point at UTF-16 index i of the code point text. */
const codePointOfIndex = (i: number): number => (i < 0xd800 ? i : i < 0xf800 ? i + 0x800 : 0x10000 + ((i - 0xf800) >> 1))

/** The ranges of the code points a property escape (`\p{...}`) matches, surrogates excluded. */
const scanProperty = (property: string): number[] => {
  const re = new RegExp(`\\p{${property}}+`, "gu")
  const text = codePointText()
  const out: number[] = []
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    const lo = codePointOfIndex(m.index)
    const end = m.index + m[0].length
    const hi = codePointOfIndex(end - 1)
    out.push(lo, hi)
  }
  return out
}

const tables = new Map<string, Ranges>()
const foldTables = new Map<string, Ranges>()

const categoryRanges = (cat: string): Ranges => {
  let t = tables.get(cat)
  if (t !== undefined) return t
  if (cat === "Cs") t = [0xd800, 0xdfff]
  else if (cat === "C") {
    // Go's C is Cc | Cf | Co | Cs: unassigned code points (Cn) are not in it.
    const r: number[] = []
    for (const c of ["Cc", "Cf", "Co", "Cs"]) appendClass(r, categoryRanges(c))
    t = cleanClass(r)
  } else t = scanProperty(`General_Category=${cat}`)
  tables.set(cat, t)
  return t
}

const scriptRanges = (script: string): Ranges => {
  const key = "script:" + script
  let t = tables.get(key)
  if (t === undefined) tables.set(key, (t = scanProperty(`Script=${script}`)))
  return t
}

/** Canonical name to the table it denotes. */
let names: Map<string, { kind: "category" | "script"; name: string }> | undefined

const knownNames = (): Map<string, { kind: "category" | "script"; name: string }> => {
  if (names !== undefined) return names
  const m = new Map<string, { kind: "category" | "script"; name: string }>()
  for (const s of SCRIPTS) {
    try {
      new RegExp(`\\p{Script=${s}}`, "u")
      m.set(canonicalName(s), { kind: "script", name: s })
    } catch {
      // A script newer than this JavaScript engine's Unicode data.
    }
  }
  for (const [alias, cat] of Object.entries(CATEGORY_ALIASES)) m.set(canonicalName(alias), { kind: "category", name: cat })
  for (const c of CATEGORIES) m.set(canonicalName(c), { kind: "category", name: c })
  names = m
  return m
}

export const ANY: Ranges = [0, MAX_RUNE]
const ASCII: Ranges = [0, 0x7f]

/**
 * The table a `\p{name}` denotes (Go's unicodeTable): its ranges, and whether the class is the
 * complement (`Assigned` is the complement of Cn). Undefined for an unknown name.
 */
export const unicodeTable = (name: string): { ranges: Ranges; key: string; negate: boolean } | undefined => {
  const c = canonicalName(name)
  switch (c) {
    case "Any":
      return { ranges: ANY, key: "Any", negate: false }
    case "Assigned":
      return { ranges: categoryRanges("Cn"), key: "Cn", negate: true }
    case "Ascii":
      return { ranges: ASCII, key: "ASCII", negate: false }
  }
  const k = knownNames().get(c)
  if (k === undefined) return undefined
  return k.kind === "category" ? { ranges: categoryRanges(k.name), key: k.name, negate: false } : { ranges: scriptRanges(k.name), key: "script:" + k.name, negate: false }
}

/** A table with every code point fold-equivalent to one of its members added (cached). */
export const foldedTable = (key: string, ranges: Ranges): Ranges => {
  let t = foldTables.get(key)
  if (t === undefined) {
    const r: number[] = []
    appendFoldedClass(r, ranges)
    foldTables.set(key, (t = cleanClass(r)))
  }
  return t
}

// ---------------------------------------------------------------------------------------------
// Perl and POSIX classes (ASCII only, as in Go)

export interface CharGroup {
  readonly negate: boolean
  readonly ranges: Ranges
}

const DIGIT: Ranges = [0x30, 0x39]
const SPACE: Ranges = [0x09, 0x0a, 0x0c, 0x0d, 0x20, 0x20]
const WORD: Ranges = [0x30, 0x39, 0x41, 0x5a, 0x5f, 0x5f, 0x61, 0x7a]

export const PERL_GROUPS: ReadonlyMap<string, CharGroup> = new Map([
  ["\\d", { negate: false, ranges: DIGIT }],
  ["\\D", { negate: true, ranges: DIGIT }],
  ["\\s", { negate: false, ranges: SPACE }],
  ["\\S", { negate: true, ranges: SPACE }],
  ["\\w", { negate: false, ranges: WORD }],
  ["\\W", { negate: true, ranges: WORD }]
])

const POSIX: Readonly<Record<string, Ranges>> = {
  alnum: [0x30, 0x39, 0x41, 0x5a, 0x61, 0x7a],
  alpha: [0x41, 0x5a, 0x61, 0x7a],
  ascii: [0x00, 0x7f],
  blank: [0x09, 0x09, 0x20, 0x20],
  cntrl: [0x00, 0x1f, 0x7f, 0x7f],
  digit: [0x30, 0x39],
  graph: [0x21, 0x7e],
  lower: [0x61, 0x7a],
  print: [0x20, 0x7e],
  punct: [0x21, 0x2f, 0x3a, 0x40, 0x5b, 0x60, 0x7b, 0x7e],
  space: [0x09, 0x0d, 0x20, 0x20],
  upper: [0x41, 0x5a],
  word: [0x30, 0x39, 0x41, 0x5a, 0x5f, 0x5f, 0x61, 0x7a],
  xdigit: [0x30, 0x39, 0x41, 0x46, 0x61, 0x66]
}

/** `[:alpha:]` or `[:^alpha:]` to its group. */
export const posixGroup = (name: string): CharGroup | undefined => {
  const m = /^\[:(\^?)([a-z]+):\]$/.exec(name)
  if (m === null || !Object.hasOwn(POSIX, m[2])) return undefined
  return { negate: m[1] === "^", ranges: POSIX[m[2]] }
}

/** Go's syntax.IsWordChar: ASCII letters, digits and underscore. */
export const isWordChar = (c: number): boolean => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || c === 0x5f || (c >= 0x61 && c <= 0x7a)
