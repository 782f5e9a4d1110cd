// The baseline: a raw node:http server that reads a JSON body, parses it and answers it back as
// JSON. Whatever the policy service achieves is compared with this on the same machine.
import * as http from "node:http"

const port = Number(process.env.PORT ?? 0)

const server = http.createServer((request, response) => {
  const chunks = []
  request.on("data", (chunk) => chunks.push(chunk))
  request.on("end", () => {
    let body
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8") || "null")
    } catch {
      response.writeHead(400, { "content-type": "application/json" }).end('{"detail":"invalid JSON"}')
      return
    }
    const payload = JSON.stringify({ echo: body })
    response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(payload) })
    response.end(payload)
  })
})

server.listen(port, "127.0.0.1", () => {
  // The parent reads the port from the first line.
  process.stdout.write(`${server.address().port}\n`)
})
process.on("SIGTERM", () => server.close(() => process.exit(0)))
