/**
 * A round-robin HTTP reverse proxy in front of the replicas of one service, as a load balancer
 * would be: each request goes to the next upstream in turn, request and answer are streamed
 * (uploads, Server-Sent Events), and the proxy counts what each upstream served so a test can
 * show that both replicas took requests.
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"

export interface RoundRobinProxy {
  readonly url: string
  /** Requests sent to each upstream (same order as `upstreams`). */
  readonly served: Array<number>
  readonly close: () => Promise<void>
}

const hopByHop = new Set(["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "te", "trailer"])

export const start = (upstreams: ReadonlyArray<string>, port = 0): Promise<RoundRobinProxy> =>
  new Promise((resolve, reject) => {
    const agent = new http.Agent({ keepAlive: true })
    const served = upstreams.map(() => 0)
    let next = 0
    const server = http.createServer((request, response) => {
      const index = next
      next = (next + 1) % upstreams.length
      served[index]! += 1
      const target = new URL(request.url ?? "/", upstreams[index])
      const headers: http.OutgoingHttpHeaders = {}
      for (const [name, value] of Object.entries(request.headers)) {
        if (!hopByHop.has(name) && value !== undefined) headers[name] = value
      }
      headers["host"] = target.host
      const upstream = http.request(target, { method: request.method, headers, agent }, (answer) => {
        const back: http.OutgoingHttpHeaders = {}
        for (const [name, value] of Object.entries(answer.headers)) {
          if (!hopByHop.has(name) && value !== undefined) back[name] = value
        }
        response.writeHead(answer.statusCode ?? 502, back)
        answer.pipe(response)
      })
      upstream.on("error", (error) => {
        if (!response.headersSent) {
          response.writeHead(502, { "content-type": "application/json" })
          response.end(JSON.stringify({ detail: `proxy: upstream ${upstreams[index]} failed: ${error.message}` }))
        } else response.destroy(error)
      })
      response.on("close", () => {
        if (!response.writableFinished) upstream.destroy()
      })
      request.pipe(upstream)
    })
    server.once("error", reject)
    server.listen(port, "127.0.0.1", () => {
      const address = server.address() as AddressInfo
      resolve({
        url: `http://127.0.0.1:${address.port}`,
        served,
        close: () =>
          new Promise((done) => {
            agent.destroy()
            server.closeAllConnections()
            server.close(() => done())
          })
      })
    })
  })
