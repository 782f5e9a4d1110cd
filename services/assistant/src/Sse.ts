/**
 * The chat stream's wire format, as the original chat frontend parses it: each frame is one
 * line `data: <json>` and a blank line, `<json> = {"type": ..., "data": ...}`, no `event:` line;
 * the stream ends with `data: [DONE]`. JSON strings escape line breaks, so a frame is always one
 * line; non-ASCII characters are sent as they are (UTF-8).
 */
import type * as Domain from "./Domain.js"

const encoder = new TextEncoder()

export const contentType = "text/event-stream; charset=utf-8"

/** Headers that keep proxies (nginx, the participant gateway) from buffering the stream. */
export const headers = {
  "cache-control": "no-cache",
  "x-accel-buffering": "no"
} as const

export const encode = (frame: Domain.ChatFrame): Uint8Array => encoder.encode(`data: ${JSON.stringify(frame)}\n\n`)

export const doneSentinel: Uint8Array = encoder.encode("data: [DONE]\n\n")
