/**
 * What the language model is given: a system text for the REC domain, the earlier turns of the
 * conversation within `ASSISTANT_HISTORY_TOKENS` (newest kept), and one user message holding the
 * page context of the request, the attached files, the retrieved passages with numbered source
 * labels within `ASSISTANT_CONTEXT_TOKENS`, and the question.
 */
import * as Prompt from "@effect/ai/Prompt"
import { countTokens } from "./Chunker.js"
import type * as Config from "./Config.js"
import type * as Domain from "./Domain.js"
import { labelOf, type Passage } from "./Retrieval.js"

export const systemText = [
  "You are the assistant of a renewable energy community (REC; in Italy a comunità energetica rinnovabile, CER) platform.",
  "You help members, producers, consumers and community managers with how energy communities work (shared energy,",
  "incentives, self-consumption, membership, governance, flexibility), with their own data on the platform, and with",
  "the documents they uploaded.",
  "Answer from the numbered sources given with the question and cite them as [1], [2].",
  "If the sources do not contain the answer, say that you do not know and what information is missing; never invent",
  "figures, rules, dates or citations.",
  "Be concise and concrete, in plain language. Reply in the language of the question."
].join(" ")

export interface HistoryTurn {
  readonly role: "user" | "assistant"
  readonly content: string
}

export interface AttachedFile {
  readonly filename: string
  readonly contentType: string
  readonly title: string | null
}

export interface PromptInput {
  readonly question: string
  readonly passages: ReadonlyArray<Passage>
  readonly page: Domain.PageContext | undefined
  readonly history: ReadonlyArray<HistoryTurn>
  readonly attachments: ReadonlyArray<AttachedFile>
}

const overviewPages = new Set(["overview", "panoramica", "dashboard", "home"])

/** Tokens of the page's data given to the model at most. */
const pageDataTokens = 600

/** The page block: where the user is, and what the page shows. `undefined` without a page. */
export const pageBlock = (page: Domain.PageContext | undefined): string | undefined => {
  if (page === undefined) return undefined
  const lines: Array<string> = []
  if (page.page !== undefined && page.page !== "") lines.push(`The user is on the page "${page.page}" of the platform.`)
  if (page.section !== undefined && page.section !== "") lines.push(`Section: "${page.section}".`)
  if (page.hint !== undefined && page.hint !== "") lines.push(`What the user is probably trying to do: ${page.hint}`)
  if (page.page !== undefined && overviewPages.has(page.page.toLowerCase())) {
    lines.push(
      "This is the overview dashboard: the user's production, consumption, self-consumption and self-consumption rate, " +
        "and the community's aggregates and trend. \"These values\" or \"this\" refer to what it shows."
    )
  }
  if (page.data !== undefined && Object.keys(page.data).length > 0) {
    let json = JSON.stringify(page.data)
    if (countTokens(json) > pageDataTokens) json = `${json.slice(0, pageDataTokens * 3)}…`
    lines.push(`Values shown on the page: ${json}`)
  }
  return lines.length === 0 ? undefined : lines.join("\n")
}


/** The passages that fit in `budget` tokens, numbered from 1 in retrieval order. */
export const sourcesBlock = (passages: ReadonlyArray<Passage>, budget: number): { text: string; used: number } => {
  const blocks: Array<string> = []
  let used = 0
  for (const p of passages) {
    const block = `[${blocks.length + 1}] ${labelOf(p)}\n${p.text}`
    const tokens = countTokens(block)
    if (used + tokens > budget && blocks.length > 0) break
    blocks.push(block)
    used += tokens
  }
  return { text: blocks.join("\n\n"), used: blocks.length }
}

/** The newest turns that fit in `budget` tokens and `maxMessages`, oldest first. */
export const historyWithin = (history: ReadonlyArray<HistoryTurn>, budget: number, maxMessages: number): Array<HistoryTurn> => {
  const kept: Array<HistoryTurn> = []
  let used = 0
  for (let i = history.length - 1; i >= 0 && kept.length < maxMessages; i--) {
    const tokens = countTokens(history[i].content) + 4
    if (used + tokens > budget) break
    kept.unshift(history[i])
    used += tokens
  }
  // A history starting with the assistant's answer to a question left out would confuse the model.
  while (kept.length > 0 && kept[0].role === "assistant") kept.shift()
  return kept
}

/** The user message: page context, attached files, sources, question. */
export const userMessage = (input: PromptInput, settings: Config.PromptSettings): string => {
  const parts: Array<string> = []
  const page = pageBlock(input.page)
  if (page !== undefined) parts.push(`Page context:\n${page}`)
  if (input.attachments.length > 0) {
    parts.push(
      "The user attached these files to the question; they are the most relevant sources:\n" +
        input.attachments.map((a) => `- ${a.filename} (${a.contentType})${a.title !== null ? `: ${a.title}` : ""}`).join("\n")
    )
  }
  const sources = sourcesBlock(input.passages, settings.contextTokens)
  parts.push(sources.used > 0 ? `Sources:\n${sources.text}` : "Sources: none were found for this question.")
  parts.push(`Question: ${input.question}`)
  return parts.join("\n\n")
}

export const make = (input: PromptInput, settings: Config.PromptSettings): Prompt.Prompt =>
  Prompt.make([
    { role: "system", content: systemText },
    ...historyWithin(input.history, settings.historyTokens, settings.historyMessages).map((turn) => ({
      role: turn.role,
      content: turn.content
    })),
    { role: "user", content: userMessage(input, settings) }
  ])
