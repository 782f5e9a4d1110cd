/**
 * Word-level text handling shared by the local embedder, the chunker and the extractive
 * answerer: normalised terms (lower case, without diacritics), a stop-word list for English and
 * Italian (the languages of the platform's communities), a light suffix stemmer, and sentence
 * splitting. Deterministic and dependency-free, so the offline providers give the same vectors
 * and answers on every machine.
 */

const stopWordList = [
  // English
  "a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and", "any", "are", "as", "at",
  "be", "because", "been", "before", "being", "below", "between", "both", "but", "by", "can", "could", "did", "do",
  "does", "doing", "down", "during", "each", "few", "for", "from", "further", "had", "has", "have", "having", "he",
  "her", "here", "hers", "herself", "him", "himself", "his", "how", "i", "if", "in", "into", "is", "it", "its",
  "itself", "just", "me", "more", "most", "my", "myself", "no", "nor", "not", "now", "of", "off", "on", "once",
  "only", "or", "other", "our", "ours", "ourselves", "out", "over", "own", "same", "she", "should", "so", "some",
  "such", "than", "that", "the", "their", "theirs", "them", "themselves", "then", "there", "these", "they", "this",
  "those", "through", "to", "too", "under", "until", "up", "very", "was", "we", "were", "what", "when", "where",
  "which", "while", "who", "whom", "why", "will", "with", "would", "you", "your", "yours", "yourself", "yourselves",
  "may", "must", "shall", "might", "does", "get", "gets", "tell", "explain", "please", "much", "many",
  // Italian
  "il", "lo", "la", "i", "gli", "le", "un", "uno", "una", "di", "da", "del", "della", "dello", "dei", "degli",
  "delle", "al", "allo", "alla", "ai", "agli", "alle", "dal", "dalla", "dai", "dagli", "dalle", "nel", "nella",
  "nei", "negli", "nelle", "sul", "sulla", "sui", "sugli", "sulle", "con", "per", "tra", "fra", "e", "ed", "o",
  "ma", "che", "chi", "cui", "non", "come", "dove", "quando", "perche", "quale", "quali", "quanto", "quanti",
  "sono", "sei", "siamo", "siete", "essere", "ho", "hai", "ha", "abbiamo", "avete", "hanno", "avere", "si", "ci",
  "vi", "mi", "ti", "ne", "questo", "questa", "questi", "queste", "quello", "quella", "anche", "piu", "molto",
  "cosa", "puo", "posso", "possono", "deve", "devono", "mio", "mia", "tuo", "tua", "suo", "sua", "nostro", "loro"
]

export const stopWords: ReadonlySet<string> = new Set(stopWordList)

const combining = /[\u0300-\u036f]/g
const wordPattern = /[\p{L}\p{N}]+/gu

/** Lower case without diacritics ("Comunità" -> "comunita"). */
export const fold = (text: string): string => text.normalize("NFKD").replace(combining, "").toLowerCase()

/** The words of a text, folded. */
export const words = (text: string): Array<string> => fold(text).match(wordPattern) ?? []

/**
 * A light stemmer: enough to meet "communities"/"community", "shared"/"sharing"/"share",
 * "incentivi"/"incentivo". Not a linguistic stemmer; both sides of every comparison go through it.
 */
export const stem = (word: string): string => {
  let w = word
  if (w.length <= 3 || /^\d+$/.test(w)) return w
  if (w.endsWith("ies") && w.length > 4) w = w.slice(0, -3) + "y"
  else if (w.endsWith("sses")) w = w.slice(0, -2)
  else if (w.endsWith("s") && !w.endsWith("ss") && !w.endsWith("us") && !w.endsWith("is")) w = w.slice(0, -1)
  if (w.length > 5 && w.endsWith("ing")) w = w.slice(0, -3)
  else if (w.length > 4 && w.endsWith("ed")) w = w.slice(0, -2)
  else if (w.length > 5 && w.endsWith("ly")) w = w.slice(0, -2)
  // English "-e" and the Italian inflections meet at the stem.
  if (w.length > 4 && /[aeio]$/.test(w)) w = w.slice(0, -1)
  if (w.length > 4 && w.endsWith("y")) w = w.slice(0, -1)
  return w
}

/** Content terms: folded words, stop words removed, stemmed. */
export const terms = (text: string): Array<string> => {
  const out: Array<string> = []
  for (const w of words(text)) {
    if (w.length < 2 && !/\d/.test(w)) continue
    if (stopWords.has(w)) continue
    out.push(stem(w))
  }
  return out
}

const abbreviations = /\b(?:e\.g|i\.e|etc|vs|art|artt|no|nr|cf|ca|approx|dr|mr|mrs|ms|prof|d\.lgs|d\.m|l|p)\.$/i

/** Sentences of a paragraph (keeps abbreviations such as "e.g." and "art." inside a sentence). */
export const sentences = (text: string): Array<string> => {
  const parts = text.replace(/\s+/g, " ").trim().split(/(?<=[.!?;])\s+(?=[\p{Lu}\p{N}"'([])/u)
  const out: Array<string> = []
  for (const part of parts) {
    const previous = out[out.length - 1]
    if (previous !== undefined && abbreviations.test(previous)) out[out.length - 1] = `${previous} ${part}`
    else if (part !== "") out.push(part)
  }
  return out
}

/** Collapses runs of blanks inside lines and of blank lines. */
export const tidy = (text: string): string =>
  text.replace(/\r\n?/g, "\n").replace(/[ \t\f\v\u00a0]+/g, " ").replace(/ *\n */g, "\n").replace(/\n{3,}/g, "\n\n").trim()
