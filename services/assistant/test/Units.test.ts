/**
 * The pure parts: chunking, the local embedder, the extractive answer, the prompt's budgets,
 * titles, follow-up queries, repository URLs, Content-Disposition, the base path.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Answerer from "@rec/assistant-service/Answerer"
import { contentDisposition } from "@rec/assistant-service/Attachments"
import { retrievalQuery, titleOf } from "@rec/assistant-service/Chat"
import * as Chunker from "@rec/assistant-service/Chunker"
import * as Config from "@rec/assistant-service/Config"
import * as Git from "@rec/assistant-service/Git"
import * as Hashing from "@rec/assistant-service/Hashing"
import * as Prompt from "@rec/assistant-service/Prompt"
import { frequentTerms, type Passage } from "@rec/assistant-service/Retrieval"
import * as Text from "@rec/assistant-service/Text"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

const options = { maxTokens: 60, overlapTokens: 15 }

const sentence = (i: number) => `Sentence number ${i} talks about shared energy and the premium tariff in the community.`

describe("Chunker", () => {
  it("keeps sections apart and carries the heading path", () => {
    const chunks = Chunker.chunk([
      { kind: "heading", level: 1, text: "Incentives" },
      { kind: "paragraph", text: "The tariff is paid for 20 years." },
      { kind: "heading", level: 2, text: "Geographic correction" },
      { kind: "paragraph", text: "Northern regions get 10 euro per MWh more." },
      { kind: "heading", level: 1, text: "Members" },
      { kind: "paragraph", text: "Households and SMEs can join." }
    ], options)
    expect(chunks.map((c) => [c.heading, c.text])).toEqual([
      ["Incentives", "The tariff is paid for 20 years."],
      ["Incentives › Geographic correction", "Northern regions get 10 euro per MWh more."],
      ["Members", "Households and SMEs can join."]
    ])
    expect(chunks.map((c) => c.index)).toEqual([0, 1, 2])
  })

  it("keeps whole paragraphs together while they fit", () => {
    const chunks = Chunker.chunk([
      { kind: "paragraph", text: "First short paragraph." },
      { kind: "paragraph", text: "Second short paragraph." }
    ], options)
    expect(chunks).toHaveLength(1)
    expect(chunks[0].text).toBe("First short paragraph.\n\nSecond short paragraph.")
    expect(chunks[0].heading).toBeNull()
  })

  it("cuts a long section between sentences, within the budget, with overlap", () => {
    const text = Array.from({ length: 12 }, (_, i) => sentence(i)).join(" ")
    const wide = { maxTokens: 80, overlapTokens: 25 }
    const chunks = Chunker.chunk([{ kind: "heading", level: 1, text: "Long" }, { kind: "paragraph", text }], wide)
    expect(chunks.length).toBeGreaterThan(2)
    for (const c of chunks) expect(c.tokenCount).toBeLessThanOrEqual(wide.maxTokens)
    // Every sentence is somewhere, none is cut.
    for (let i = 0; i < 12; i++) expect(chunks.some((c) => c.text.includes(sentence(i)))).toBe(true)
    // Each chunk after the first starts with the last sentence of the one before.
    for (let i = 1; i < chunks.length; i++) {
      const previous = Text.sentences(chunks[i - 1].text)
      expect(chunks[i].text.startsWith(previous[previous.length - 1])).toBe(true)
    }
  })

  it("cuts a sentence longer than a chunk between tokens", () => {
    const long = Array.from({ length: 200 }, (_, i) => `word${i}`).join(" ")
    const chunks = Chunker.chunk([{ kind: "paragraph", text: long }], options)
    expect(chunks.length).toBeGreaterThan(2)
    for (const c of chunks) expect(c.tokenCount).toBeLessThanOrEqual(options.maxTokens + 2)
    expect(chunks.map((c) => c.text).join(" ")).toContain("word199")
  })

  it("makes no chunk of blank blocks", () => {
    expect(Chunker.chunk([{ kind: "heading", level: 1, text: "Empty" }, { kind: "paragraph", text: "  " }], options)).toEqual([])
  })
})

describe("the local embedder", () => {
  it("is deterministic, normalised and of the asked dimension", () => {
    const a = Hashing.embed("Shared energy of the community", 256)
    expect(a).toHaveLength(256)
    expect(Hashing.embed("Shared energy of the community", 256)).toEqual(a)
    expect(Math.sqrt(a.reduce((s, x) => s + x * x, 0))).toBeCloseTo(1, 10)
  })

  it("puts related texts closer than unrelated ones, across inflections and diacritics", () => {
    const dims = 512
    const q = Hashing.embed("How are communities sharing energy?", dims)
    const related = Hashing.embed("The community shares the energy its plants produce.", dims)
    const unrelated = Hashing.embed("Lower the heating set-point by one degree.", dims)
    expect(Hashing.cosine(q, related)).toBeGreaterThan(Hashing.cosine(q, unrelated) + 0.1)
    const italian = Hashing.cosine(Hashing.embed("comunità energetica", dims), Hashing.embed("comunita energetiche", dims))
    expect(italian).toBeGreaterThan(0.6)
  })

  it("gives the zero vector to a text without words", () => {
    expect(Hashing.embed("?!", 8).every((x) => x === 0)).toBe(true)
  })
})

const passage = (over: Partial<Passage> = {}): Passage => ({
  chunkId: "1",
  attachmentId: "00000000-0000-4000-8000-000000000001",
  chunkIndex: 0,
  heading: "Shared energy",
  text: "For each hour, shared energy is the minimum of the energy fed in and the energy withdrawn. " +
    "Members keep their supplier. The incentive is paid for 20 years.",
  filename: "06-shared-energy.md",
  title: "Shared energy",
  location: "06-shared-energy",
  source: "training_material",
  score: 0.03,
  similarity: 0.5,
  textRank: 0.1,
  ...over
})

describe("the extractive answer", () => {
  it("says no model is configured and quotes the passages with their labels", () => {
    const text = Answerer.extractiveText({ question: "How is shared energy computed?", passages: [passage()], page: undefined, history: [], attachments: [] })
    expect(text.startsWith(Answerer.noModelNotice)).toBe(true)
    expect(text).toContain("[1] Shared energy:")
    expect(text).toContain("For each hour, shared energy is the minimum")
  })

  it("quotes the sentences of a long passage that match the question, in their order", () => {
    const filler = Array.from({ length: 30 }, (_, i) => `Filler sentence ${i} about nothing in particular here.`).join(" ")
    const text = `${filler} The premium tariff is paid for twenty years. ${filler}`
    const picked = Answerer.bestSentences(text, new Set(Text.terms("How long is the premium tariff paid?")), 3)
    expect(picked[0]).toBe("The premium tariff is paid for twenty years.")
  })

  it("says plainly when nothing was found", () => {
    const text = Answerer.extractiveText({ question: "Who won the match?", passages: [], page: undefined, history: [], attachments: [] })
    expect(text).toBe(Answerer.nothingFound)
  })

  it("shows the page's values when the page sends some", () => {
    const text = Answerer.extractiveText({
      question: "What do these values mean?",
      passages: [passage()],
      page: { page: "overview", data: { production_kwh: 412.5, self_consumption_rate: 0.38, nested: { x: 1 } } },
      history: [],
      attachments: []
    })
    expect(text).toContain("On the page overview: production_kwh: 412.5; self_consumption_rate: 0.38.")
  })

  it("streams words with their spacing, nothing lost", () => {
    const deltas = Answerer.deltas("Hello  world,\n\nagain ")
    expect(deltas.join("")).toBe("Hello  world,\n\nagain ")
    expect(deltas).toEqual(["Hello  ", "world,\n\n", "again "])
  })
})

describe("the prompt", () => {
  const settings = { contextTokens: 3000, historyTokens: 40, historyMessages: 20 }

  it("keeps the newest turns within the token budget and never starts with an answer", () => {
    const history = [
      { role: "user" as const, content: "first question ".repeat(20) },
      { role: "assistant" as const, content: "first answer" },
      { role: "user" as const, content: "second question" },
      { role: "assistant" as const, content: "second answer" }
    ]
    expect(Prompt.historyWithin(history, settings.historyTokens, 20)).toEqual(history.slice(2))
    expect(Prompt.historyWithin(history, 1000, 3)).toEqual(history.slice(2))
  })

  it("numbers the sources within the context budget", () => {
    const many = Array.from({ length: 10 }, (_, i) => passage({ chunkId: String(i), text: `passage ${i} `.repeat(100) }))
    const block = Prompt.sourcesBlock(many, 500)
    expect(block.used).toBeGreaterThan(0)
    expect(block.used).toBeLessThan(10)
    expect(block.text.startsWith("[1] Shared energy")).toBe(true)
  })

  it("has the page context, the attachments, the sources and the question in the user message", () => {
    const text = Prompt.userMessage({
      question: "What does this mean?",
      passages: [passage()],
      page: { page: "overview", section: "month", hint: "check the self-consumption" },
      history: [],
      attachments: [{ filename: "bill.pdf", contentType: "application/pdf", title: "March bill" }]
    }, settings)
    expect(text).toContain("The user is on the page \"overview\"")
    expect(text).toContain("This is the overview dashboard")
    expect(text).toContain("- bill.pdf (application/pdf): March bill")
    expect(text).toContain("Sources:\n[1] Shared energy\n")
    expect(text.endsWith("Question: What does this mean?")).toBe(true)
    const prompt = Prompt.make({ question: "q", passages: [], page: undefined, history: [{ role: "user", content: "earlier" }, { role: "assistant", content: "reply" }], attachments: [] }, settings)
    expect(prompt.content.map((m) => m.role)).toEqual(["system", "user", "assistant", "user"])
  })
})

describe("term statistics", () => {
  it("names the lexemes held by more chunks than the limit", () => {
    const stats = { rows: 100_000, frequencies: new Map([["energi", 0.6], ["share", 0.02], ["calcul", 0.009], ["gse", 0.0001]]) }
    expect(frequentTerms(stats, 1000)).toEqual(["energi", "share"])
    // A small collection skips nothing: every term is rare in absolute numbers.
    expect(frequentTerms({ rows: 150, frequencies: new Map([["energi", 0.9]]) }, 1000)).toEqual([])
    // Never analyzed: nothing is known, nothing is skipped.
    expect(frequentTerms({ rows: 0, frequencies: new Map() }, 1000)).toEqual([])
  })
})

describe("titles and queries", () => {
  it("titles a conversation after its first message", () => {
    expect(titleOf("  What is   shared energy? ", [])).toBe("What is shared energy?")
    const long = titleOf("How does the community distribute the premium tariff among producers, consumers and the social fund?", [])
    expect(long.endsWith("…")).toBe(true)
    expect(long.length).toBeLessThanOrEqual(61)
    expect(titleOf("", ["bill.pdf"])).toBe("Files: bill.pdf")
  })

  it("adds the previous question to a short follow-up", () => {
    const history = [{ role: "user" as const, content: "Can a shop join the community?" }, { role: "assistant" as const, content: "Yes." }]
    expect(retrievalQuery("and a farm?", history)).toBe("and a farm?\nCan a shop join the community?")
    expect(retrievalQuery("How is the incentive for a remote self-consumer computed?", history)).toBe(
      "How is the incentive for a remote self-consumer computed?"
    )
  })
})

describe("repositories", () => {
  it("accepts local paths and https URLs only", () => {
    expect(Git.parseRepository("/srv/training", "/x")).toEqual({ _tag: "Local", path: "/srv/training" })
    expect(Git.parseRepository("materials", "/srv")).toEqual({ _tag: "Local", path: "/srv/materials" })
    expect(Git.parseRepository("https://git.example.org/rec/training.git")).toEqual({ _tag: "Https", url: "https://git.example.org/rec/training.git" })
    for (const refused of ["http://git.example.org/x.git", "git@github.com:rec/training.git", "ssh://git@host/x", "file:///srv/x", "ext::sh -c touch% /tmp/pwned", "git://host/x", "-uhelp", ""]) {
      expect(Git.parseRepository(refused), refused).toBeUndefined()
    }
  })

  it("hides credentials in URLs", () => {
    expect(Git.redact("fatal: https://user:token@git.example.org/x.git not found")).toBe("fatal: https://***@git.example.org/x.git not found")
  })
})

describe("headers and configuration", () => {
  it("names a download safely", () => {
    expect(contentDisposition("bill.pdf")).toBe("inline; filename=\"bill.pdf\"; filename*=UTF-8''bill.pdf")
    expect(contentDisposition("bolletta \"marzo\"\\è.pdf")).toBe(
      "inline; filename=\"bolletta _marzo___.pdf\"; filename*=UTF-8''bolletta%20%22marzo%22%5C%C3%A8.pdf"
    )
    expect(contentDisposition("a\r\nSet-Cookie: x")).not.toMatch(/[\r\n]/)
  })

  it("picks the providers: offline unless an OpenAI-compatible server is named (empty counts as unset)", () => {
    const providers = (env: Record<string, string>) =>
      Effect.runSync(Effect.withConfigProvider(Config.providers, ConfigProvider.fromMap(new Map(Object.entries(env)))))
    expect(providers({})).toEqual({ chat: "extractive", embeddings: "local", localDimensions: 512 })
    expect(providers({ OPENAI_BASE_URL: "", OPENAI_API_KEY: " " })).toMatchObject({ chat: "extractive", embeddings: "local" })
    expect(providers({ OPENAI_BASE_URL: "http://localhost:11434/v1" })).toMatchObject({ chat: "openai", embeddings: "openai" })
    expect(providers({ OPENAI_API_KEY: "k", ASSISTANT_EMBEDDING_PROVIDER: "local" })).toMatchObject({ chat: "openai", embeddings: "local" })
    const openAi = Effect.runSync(Effect.withConfigProvider(Config.openAi, ConfigProvider.fromMap(new Map([["OPENAI_BASE_URL", ""]]))))
    expect(openAi.baseUrl).toBe("https://api.openai.com/v1")
    expect(Option.isNone(openAi.apiKey)).toBe(true)
  })

  it("normalises the base path", () => {
    expect(Config.normaliseBase("/api")).toEqual(Option.some("/api"))
    expect(Config.normaliseBase("api/")).toEqual(Option.some("/api"))
    expect(Config.normaliseBase("/assistant/api/")).toEqual(Option.some("/assistant/api"))
    expect(Config.normaliseBase("/")).toEqual(Option.none())
    expect(Config.normaliseBase("")).toEqual(Option.none())
  })
})
