// The RE2 engine (src/re2): Go's regexp/syntax grammar and error messages, leftmost-first
// submatches, Go's FindAll/ReplaceAll/Split rules, case folding and Unicode classes, linear
// time on patterns that make backtracking engines explode, and the work meter.
import { describe, expect, it } from "vitest"
import { executeWith } from "@rec/rego/re2/exec"
import { Regexp, RegexpSyntaxError } from "@rec/rego/re2/regexp"
import { foldOrbit, MAX_FOLD, MIN_FOLD } from "@rec/rego/re2/unicode"
import { thrown } from "./helpers.js"

const positions = (pattern: string, text: string): string => {
  const m = Regexp.compile(pattern).findSubmatchIndex(text)
  return m === null ? "-" : Array.from(m).join(",")
}

const syntaxError = (pattern: string): string => thrown(RegexpSyntaxError, () => Regexp.compile(pattern)).message

describe("syntax", () => {
  it("reports invalid patterns with Go's messages", () => {
    const cases: Array<[string, string]> = [
      ["a**", "invalid nested repetition operator: `**`"],
      ["a{2}{3}", "invalid nested repetition operator: `{2}{3}`"],
      ["*", "missing argument to repetition operator: `*`"],
      ["(*)", "missing argument to repetition operator: `*`"],
      ["(", "missing closing ): `(`"],
      ["(a|b", "missing closing ): `(a|b`"],
      [")", "unexpected ): `)`"],
      ["a)", "unexpected ): `a)`"],
      ["[a", "missing closing ]: `[a`"],
      ["[a-", "missing closing ]: `[a-`"],
      ["[z-a]", "invalid character class range: `z-a`"],
      ["[[:foo:]]", "invalid character class range: `[:foo:]`"],
      ["\\p{Klingon}", "invalid character class range: `\\p{Klingon}`"],
      ["\\pX", "invalid character class range: `\\pX`"],
      ["x{1001}", "invalid repeat count: `{1001}`"],
      ["x{2,1}", "invalid repeat count: `{2,1}`"],
      ["(?:[a-z]{4}){0,251}", "invalid repeat count: `{0,251}`"],
      ["a\\", "trailing backslash at end of expression: ``"],
      ["\\8", "invalid escape sequence: `\\8`"],
      ["\\x{110000}", "invalid escape sequence: `\\x{110000`"],
      ["\\C", "invalid escape sequence: `\\C`"],
      ["(?P<x y>a)", "invalid named capture: `(?P<x y>`"],
      ["(?P<>a)", "invalid named capture: `(?P<>`"],
      ["(?i", "invalid or unsupported Perl syntax: `(?i`"],
      ["(?-)", "invalid or unsupported Perl syntax: `(?-)`"],
      ["(?P=name)", "invalid or unsupported Perl syntax: `(?P`"]
    ]
    for (const [pattern, message] of cases) expect(syntaxError(pattern), pattern).toBe(`error parsing regexp: ${message}`)
  })

  it("rejects what RE2 does not support: backreferences and lookaround", () => {
    expect(syntaxError("(a)\\1")).toBe("error parsing regexp: invalid escape sequence: `\\1`")
    expect(syntaxError("(?=a)")).toBe("error parsing regexp: invalid or unsupported Perl syntax: `(?=`")
    expect(syntaxError("(?!a)")).toBe("error parsing regexp: invalid or unsupported Perl syntax: `(?!`")
    expect(syntaxError("(?<=a)b")).toBe("error parsing regexp: invalid named capture: `(?<=a)b`")
  })

  it("enforces Go's nesting and size limits", () => {
    expect(syntaxError("(".repeat(1001) + ")".repeat(1001))).toMatch(/^error parsing regexp: expression nests too deeply: /)
    expect(() => Regexp.compile("(".repeat(999) + ")".repeat(999))).not.toThrow()
    expect(syntaxError("((((((((((x{2}){2}){2}){2}){2}){2}){2}){2}){2}){2})")).toMatch(/^error parsing regexp: invalid repeat count/)
    expect(syntaxError("(xx?){1000}".repeat(1000))).toMatch(/^error parsing regexp: expression too large: /)
  })

  it("accepts Go's syntax that JavaScript lacks", () => {
    expect(positions("(?P<first>a)(?<second>b)", "ab")).toBe("0,2,0,1,1,2")
    expect(Regexp.compile("(?P<first>a)(?<second>b)").subexpNames).toEqual(["", "first", "second"])
    expect(positions("\\Q.*+\\E", "a.*+b")).toBe("1,4")
    expect(positions("\\Aab\\z", "ab")).toBe("0,2")
    expect(positions("[[:^alpha:]]+", "ab12cd")).toBe("2,4")
    expect(positions("[[:word:][:space:]]+", "-a b_c-")).toBe("1,6")
    expect(positions("\\pL+", "1héllo2")).toBe("1,6")
    expect(positions("\\p{Greek}+", "abc αβγ")).toBe("4,7")
    expect(positions("\\p{greek}", "λ")).toBe("0,1")
    expect(positions("\\p{Uppercase_Letter}", "aB")).toBe("1,2")
    expect(positions("\\P{L}", "ab1")).toBe("2,3")
    expect(positions("[^\\P{Nd}]", "a٣")).toBe("1,2")
    expect(positions("\\x{1F600}|\\x41", "-A")).toBe("1,2")
    expect(positions("\\101\\0", "A\u0000")).toBe("0,2")
  })

  it("applies flags to the rest of the group, and restores them after it", () => {
    expect(positions("a(?i)b", "aB")).toBe("0,2")
    expect(positions("a(?i)b", "AB")).toBe("-")
    expect(positions("(?i:a)b", "Ab")).toBe("0,2")
    expect(positions("(?i:a)b", "AB")).toBe("-")
    expect(positions("(?i)a(?-i)b", "Ab")).toBe("0,2")
    expect(positions("(?s).", "\n")).toBe("0,1")
    expect(positions(".", "\n")).toBe("-")
    expect(positions("(?m)^b$", "a\nb\nc")).toBe("2,3")
    expect(positions("^b$", "a\nb\nc")).toBe("-")
    expect(positions("(?U)a+", "aaa")).toBe("0,1")
    expect(positions("(?U)a+?", "aaa")).toBe("0,3")
  })
})

describe("matching", () => {
  it("gives Go's leftmost-first submatches", () => {
    expect(positions("(a+|b)+", "ab")).toBe("0,2,1,2")
    expect(positions("(fo|foo)", "foo")).toBe("0,2,0,2")
    expect(positions("(foo|fo)", "foo")).toBe("0,3,0,3")
    expect(positions("a(x*)b", "-axxb-")).toBe("1,5,2,4")
    expect(positions("(a)|b", "b")).toBe("0,1,-1,-1")
    // Captures keep their last value across iterations, unlike JavaScript's reset.
    expect(positions("(?:(a)|b)+", "ab")).toBe("0,2,0,1")
    // No rule against empty iterations (Perl and JavaScript differ here).
    expect(positions("(x*?)+", "xbax")).toBe("0,0,0,0")
    // Repetitions expand as Go's simplifier does: the last copy's capture wins.
    expect(positions("(a){2}", "aa")).toBe("0,2,1,2")
    expect(positions("(a){0}b", "ab")).toBe("1,2,-1,-1")
  })

  it("evaluates empty-width assertions with the surrounding text", () => {
    expect(positions("^", "x")).toBe("0,0")
    expect(positions("$", "x")).toBe("1,1")
    expect(positions("$", "x\n")).toBe("2,2")
    expect(positions("\\b", "x")).toBe("0,0")
    expect(positions("\\b$", "y x")).toBe("3,3")
    expect(positions("\\bfoo\\b", "nofoo foo that")).toBe("6,9")
    expect(positions("\\Bo\\B", "foo")).toBe("1,2")
    // Word boundaries are ASCII-only, as in Go.
    expect(positions("\\bé", "é")).toBe("-")
    const re = Regexp.compile("^a")
    expect(re.findSubmatchIndex("ba", 1)).toBeNull()
  })

  it("folds case as Go's unicode.SimpleFold does", () => {
    expect(positions("(?i)k", "\u212a")).toBe("0,1")
    expect(positions("(?i)s", "\u017f")).toBe("0,1")
    expect(positions("(?i)[a-z]+", "HeLLo\u017f")).toBe("0,6")
    expect(positions("(?i)ß", "ẞ")).toBe("0,1")
    expect(positions("(?i)σ", "ς")).toBe("0,1")
    // Dotless i folds only under Turkic rules.
    expect(positions("(?i)i", "\u0131")).toBe("-")
    expect(positions("(?i)\u0131", "I")).toBe("-")
    // A negated class is negated after folding.
    expect(positions("(?i)[^k]", "K")).toBe("-")
    expect(positions("(?i)\\W", "\u212a")).toBe("-")
  })

  it("builds fold orbits that agree with the JavaScript engine's case folding", () => {
    const cased = /\p{CWCM}/u
    for (let c = MIN_FOLD; c <= MAX_FOLD; c++) {
      const s = String.fromCodePoint(c)
      if (!cased.test(s)) continue
      const orbit = foldOrbit(c) ?? [c]
      expect(orbit).toContain(c)
      const re = new RegExp(`^${s.replace(/[\\^$.*+?()[\]{}|/-]/g, "\\$&")}$`, "iu")
      for (const d of orbit) expect(re.test(String.fromCodePoint(d)), `${c.toString(16)} ~ ${d.toString(16)}`).toBe(true)
    }
  })

  it("reads code points beyond the BMP as one rune, and a lone surrogate as U+FFFD", () => {
    expect(positions("^.$", "😀")).toBe("0,2")
    expect(positions("^..$", "😀")).toBe("-")
    expect(positions("\\x{FFFD}", "a\ud800b")).toBe("1,2")
    expect(positions("\\x{D800}", "a\ud800b")).toBe("-")
    expect(positions("a\\x{D800}", "aa\ud800b")).toBe("-")
    expect(Regexp.compile("").findAllString("😀😀", -1)).toEqual(["", "", ""])
  })
})

describe("Go's Find, Replace and Split rules", () => {
  it("skips an empty match right after a match", () => {
    expect(Regexp.compile("a*").findAllString("baaab", -1)).toEqual(["", "aaa", ""])
    expect(Regexp.compile("a.").findAllString("paranormal", 2)).toEqual(["ar", "an"])
    expect(Regexp.compile("a(x*)b").findAllStringSubmatch("-ab-axb-", -1)).toEqual([
      ["ab", ""],
      ["axb", "x"]
    ])
    expect(Regexp.compile("(a)|b").findAllStringSubmatch("b", -1)).toEqual([["b", ""]])
  })

  it("replaces with Expand templates", () => {
    expect(Regexp.compile("w(x*)y").replaceAllString("-wy-wxxy-", "0")).toBe("-0-0-")
    expect(Regexp.compile("(foo)").replaceAllString("foo", "$1$1")).toBe("foofoo")
    expect(Regexp.compile("(?P<w>\\w+)").replaceAllString("hi there", "<${w}>")).toBe("<hi> <there>")
    expect(Regexp.compile("(\\w+)").replaceAllString("ab", "$1x|${1}x|$$")).toBe("|abx|$")
    expect(Regexp.compile("^[a-z]").replaceAllString("foo", "F")).toBe("Foo")
    expect(Regexp.compile("a*").replaceAllString("baaac", "-")).toBe("-b-c-")
  })

  it("splits as Regexp.Split(s, -1)", () => {
    expect(Regexp.compile("a").split("banana")).toEqual(["b", "n", "n", ""])
    expect(Regexp.compile("z+").split("pizza")).toEqual(["pi", "a"])
    expect(Regexp.compile("[a-z]+$").split("foobar baz")).toEqual(["foobar ", ""])
    expect(Regexp.compile("^[a-z ]+$").split("foobar baz")).toEqual(["", ""])
    expect(Regexp.compile("x").split("")).toEqual([""])
    expect(Regexp.compile("").split("abc")).toEqual(["a", "b", "c"])
  })
})

describe("linear time", () => {
  const catastrophic: Array<[string, string]> = [
    ["(a+)+$", "a".repeat(30) + "!"],
    ["(a|aa)+$", "a".repeat(40) + "!"],
    ["(x+x+)+y", "x".repeat(40)],
    ["^(([a-z])+.)+[A-Z]([a-z])+$", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!"],
    ["(.*a){12}", "a".repeat(30)],
    ["^([^{]*(\\{[^}]*\\})?)*$", "a".repeat(40) + "{"]
  ]

  it("answers patterns that make backtracking explode in milliseconds", () => {
    for (const [pattern, text] of catastrophic) {
      const re = Regexp.compile(pattern)
      const t0 = performance.now()
      re.matchString(text)
      re.findSubmatchIndex(text)
      expect(performance.now() - t0, pattern).toBeLessThan(50)
    }
  })

  it("grows linearly with the input", () => {
    const re = Regexp.compile("(a+)+$")
    const time = (n: number): number => {
      const text = "a".repeat(n) + "!"
      const t0 = performance.now()
      expect(re.matchString(text)).toBe(false)
      return performance.now() - t0
    }
    time(10_000)
    expect(time(200_000)).toBeLessThan(2_000)
  })

  it("reports its work to the meter, which can stop a match", () => {
    const re = Regexp.compile("[a-q][^u-z]{13}x")
    let work = 0
    re.matchString("a".repeat(20_000), (n) => (work += n))
    expect(work).toBeGreaterThan(20_000)
    const stop = new Error("budget exhausted")
    expect(() =>
      re.matchString("a".repeat(1_000_000), (n) => {
        work += n
        if (work > 1_000_000) throw stop
      })
    ).toThrow(stop)
  })
})

describe("the two matchers", () => {
  // A seeded generator of patterns over a small alphabet, so that matches and near misses are
  // frequent. Quantifiers apply to single characters and classes only where JavaScript is the
  // oracle (its empty-iteration rule makes quantified groups differ).
  const generator = (seed: number): ((n: number) => number) => {
    let s = seed
    return (n) => {
      s = (s + 0x6d2b79f5) | 0
      let t = Math.imul(s ^ (s >>> 15), 1 | s)
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
      return ((t ^ (t >>> 14)) >>> 0) % n
    }
  }
  const patterns = (seed: number, quantifyGroups: boolean): (() => string) => {
    const rnd = generator(seed)
    const atom = (d: number): string => {
      const k = rnd(d > 3 ? 6 : 10)
      if (k < 3) return "ab c"[rnd(4)]
      if (k === 3) return ["[ab]", "[^a]", ".", "\\w", "\\s", "[a-c]"][rnd(6)]
      if (k === 4) return ["^", "$", "\\b", "\\B"][rnd(4)]
      if (k === 5) return "x"
      return (k === 8 ? "(?:" : "(") + alt(d + 1) + ")"
    }
    const piece = (d: number): string => {
      const a = atom(d)
      const q = rnd(8)
      if (q >= 4 || /^[\^$]$|^\\[bB]$/.test(a) || (!quantifyGroups && a.startsWith("("))) return a
      return a + ["*", "+", "?", "{1,2}"][q] + (rnd(3) === 0 ? "?" : "")
    }
    const seq = (d: number): string => {
      let s = ""
      for (let i = 1 + rnd(3); i > 0; i--) s += piece(d)
      return s
    }
    const alt = (d: number): string => {
      let s = seq(d)
      while (rnd(4) === 0) s += "|" + seq(d)
      return s
    }
    return () => alt(0)
  }
  const texts = (seed: number): (() => string) => {
    const rnd = generator(seed)
    return () => {
      let s = ""
      for (let n = rnd(8); n > 0; n--) s += "abc x\n"[rnd(6)]
      return s
    }
  }

  it("the backtracker and the Pike VM agree on every submatch", () => {
    const next = patterns(1, true)
    const text = texts(2)
    for (let i = 0; i < 2_000; i++) {
      const re = Regexp.compile(next())
      const ncap = 2 * (re.numSubexp + 1)
      for (let j = 0; j < 4; j++) {
        const s = text()
        const a = executeWith("backtrack", re, s, 0, ncap)
        const b = executeWith("pike", re, s, 0, ncap)
        expect(b === null ? null : Array.from(b), `${re.source} on ${JSON.stringify(s)}`).toEqual(a === null ? null : Array.from(a))
      }
    }
  })

  it("agree with JavaScript's backtracking engine where the semantics coincide", () => {
    const next = patterns(3, false)
    const text = texts(4)
    for (let i = 0; i < 2_000; i++) {
      const pattern = next()
      const re = Regexp.compile(pattern)
      const js = new RegExp(pattern, "ud")
      const ncap = 2 * (re.numSubexp + 1)
      for (let j = 0; j < 4; j++) {
        const s = text()
        const m = js.exec(s)
        const want = m === null ? null : Array.from({ length: ncap / 2 }, (_, g) => m.indices?.[g] ?? [-1, -1]).flat()
        const got = re.findSubmatchIndex(s)
        expect(got === null ? null : Array.from(got), `${pattern} on ${JSON.stringify(s)}`).toEqual(want)
      }
    }
  })
})
