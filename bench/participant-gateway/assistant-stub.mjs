#!/usr/bin/env node
// A stand-in for the assistant's chat stream with a fixed rhythm, so the benchmark measures the relaying alone: POST
// /api/chat answers Server-Sent Events framed as the assistant frames them, the meta frame at
// once, then TOKENS token frames TOKEN_INTERVAL_MS apart, done and [DONE]. Prints its port.
/* global setInterval, clearInterval */
import * as http from "node:http"

const tokens = Number(process.env.TOKENS ?? 10)
const interval = Number(process.env.TOKEN_INTERVAL_MS ?? 10)

const server = http.createServer((request, response) => {
  if (request.method !== "POST" || !request.url.startsWith("/api/chat")) {
    response.writeHead(404, { "content-type": "application/json" })
    response.end(JSON.stringify({ detail: "not found" }))
    return
  }
  request.resume()
  request.on("end", () => {
    response.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" })
    const frame = (type, data) => response.write(`data: ${JSON.stringify({ type, data })}\n\n`)
    frame("meta", { conversation_id: "c-1", title: "Bench" })
    let sent = 0
    const timer = setInterval(() => {
      if (sent < tokens) {
        frame("token", `token ${sent++} `)
        return
      }
      clearInterval(timer)
      frame("done", null)
      response.end("data: [DONE]\n\n")
    }, interval)
    response.on("close", () => clearInterval(timer))
  })
})
server.keepAliveTimeout = 60_000
server.listen(0, "127.0.0.1", () => console.log(server.address().port))
