/**
 * The offline embedder's vectoriser (design.md, "Assistant without network access"): feature
 * hashing of stemmed words, word bigrams and character n-grams into a fixed number of
 * dimensions, with a hash-derived sign per feature (so collisions cancel instead of piling up),
 * sub-linear term weights, and L2 normalisation, so cosine similarity is a dot product.
 *
 * Words carry topic, bigrams carry phrases ("shared energy" is not "energy shared by"), and
 * character n-grams meet inflections and compounds the stemmer misses ("autoconsumo" and
 * "self-consumption" do not meet, but "autoconsumi" and "autoconsumo" do).
 */
import { stopWords, stem, words } from "./Text.js"

/** Version of the features: part of the embedder id, so a change re-embeds through `/admin/reload`. */
export const version = "v1"

const wordWeight = 1
const bigramWeight = 0.7
const gramWeight = 0.3
const gramSizes = [3, 4] as const

/** FNV-1a over UTF-16 code units, finished with murmur3's avalanche step. */
const hash = (text: string): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  h ^= h >>> 16
  return h >>> 0
}

const add = (features: Map<string, number>, key: string, weight: number) => {
  features.set(key, (features.get(key) ?? 0) + weight)
}

/** The weighted features of a text. */
export const features = (text: string): Map<string, number> => {
  const out = new Map<string, number>()
  let previous: string | undefined
  for (const word of words(text)) {
    if (stopWords.has(word) || (word.length < 2 && !/\d/.test(word))) {
      previous = undefined
      continue
    }
    const stemmed = stem(word)
    add(out, `w:${stemmed}`, wordWeight)
    if (previous !== undefined) add(out, `b:${previous} ${stemmed}`, bigramWeight)
    previous = stemmed
    const marked = `#${word}#`
    for (const n of gramSizes) {
      if (marked.length < n) continue
      for (let i = 0; i + n <= marked.length; i++) add(out, `c:${marked.slice(i, i + n)}`, gramWeight)
    }
  }
  return out
}

/** The normalised vector of a text (all zeros for a text without words). */
export const embed = (text: string, dimensions: number): Array<number> => {
  const vector = new Float64Array(dimensions)
  for (const [key, weight] of features(text)) {
    const h = hash(key)
    const sign = (h & 0x80000000) === 0 ? 1 : -1
    vector[h % dimensions] += sign * Math.sqrt(weight)
  }
  let norm = 0
  for (let i = 0; i < dimensions; i++) norm += vector[i] * vector[i]
  norm = Math.sqrt(norm)
  const out = new Array<number>(dimensions)
  for (let i = 0; i < dimensions; i++) out[i] = norm === 0 ? 0 : vector[i] / norm
  return out
}

/** Cosine similarity of two normalised vectors. */
export const cosine = (a: ReadonlyArray<number>, b: ReadonlyArray<number>): number => {
  let dot = 0
  for (let i = 0; i < a.length; i++) dot += a[i] * b[i]
  return dot
}
