/**
 * E-mail recipients of alerts (reference grid-gateway.md §6.4 step 5-6): free text split on
 * commas, semicolons and white space, each address kept once (case-insensitively, first spelling
 * and order kept), and the synthetic nudging user id of a recipient list.
 */
import * as crypto from "node:crypto"

/** `local@domain.tld`, no white space, one `@` (the original's rule), at most 254 characters. */
const emailPattern = /^[^@\s,;]+@[^@\s,;]+\.[^@\s,;]+$/

export const isEmail = (s: string): boolean => s.length <= 254 && emailPattern.test(s)

export interface Parsed {
  readonly addresses: ReadonlyArray<string>
  /** Entries that are not e-mail addresses, as given. */
  readonly invalid: ReadonlyArray<string>
}

/** Every entry of every input, split on commas, semicolons and white space. */
export const parseStrict = (inputs: ReadonlyArray<string>): Parsed => {
  const seen = new Set<string>()
  const addresses: Array<string> = []
  const invalid: Array<string> = []
  for (const input of inputs) {
    for (const token of input.split(/[,;\s]+/)) {
      if (token === "") continue
      if (!isEmail(token)) {
        invalid.push(token)
        continue
      }
      const key = token.toLowerCase()
      if (seen.has(key)) continue
      seen.add(key)
      addresses.push(token)
    }
  }
  return { addresses, invalid }
}

/**
 * The nudging service's user id for a list of recipients without an account: `email-ingest:`
 * and the first 16 hex digits of SHA-256 over the lower-cased, sorted addresses joined by `|`
 * (the same id the nudging service derives, so both sides agree on whom it is for).
 */
export const syntheticUserId = (addresses: ReadonlyArray<string>): string => {
  const joined = [...new Set(addresses.map((a) => a.toLowerCase()))].sort().join("|")
  return `email-ingest:${crypto.createHash("sha256").update(joined).digest("hex").slice(0, 16)}`
}
