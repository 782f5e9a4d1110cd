/**
 * The HTTP face of the dev identity provider: a Node request handler that answers discovery,
 * token, authorization, userinfo, introspection and health itself (see `Provider.ts`) and
 * hands the JWKS, revocation, logout and CORS preflights to oauth2-mock-server's handler.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from "node:http"
import type { OAuthResponse, Provider } from "./Provider.js"
import { endpoints } from "./Provider.js"

const maxBodyBytes = 64 * 1024

class BodyError extends Error {}

const readBody = (req: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    let size = 0
    req.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size > maxBodyBytes) {
        reject(new BodyError(`request body larger than ${maxBodyBytes} bytes`))
        req.destroy()
        return
      }
      chunks.push(chunk)
    })
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    req.on("error", reject)
  })

/** Form parameters of a token-style request: urlencoded (the standard) or a flat JSON object. */
const readParams = async (req: IncomingMessage): Promise<URLSearchParams> => {
  const text = await readBody(req)
  const type = (req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase()
  if (type === "application/json") {
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch {
      throw new BodyError("malformed JSON body")
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new BodyError("expected a JSON object")
    const params = new URLSearchParams()
    for (const [key, value] of Object.entries(parsed)) {
      if (typeof value === "string") params.set(key, value)
      else if (Array.isArray(value)) params.set(key, value.join(" "))
      else throw new BodyError(`parameter '${key}' must be a string`)
    }
    return params
  }
  if (type !== "application/x-www-form-urlencoded" && text.length > 0) {
    throw new BodyError("expected an application/x-www-form-urlencoded body")
  }
  return new URLSearchParams(text)
}

const send = (res: ServerResponse, response: OAuthResponse) => {
  res.writeHead(response.status, {
    "content-type": "application/json",
    "cache-control": "no-store",
    pragma: "no-cache",
    "access-control-allow-origin": "*",
    ...response.headers
  })
  res.end(JSON.stringify(response.body))
}

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" })[c]!)

/** A page listing the users; each entry continues the authorization request as that user. */
const loginPage = (query: URLSearchParams, result: Extract<ReturnType<Provider["authorize"]>, { _tag: "Login" }>) => {
  const rows = result.users.map((user) => {
    const next = new URLSearchParams(query)
    next.set("login_hint", user.username)
    return `<li><a href="?${escapeHtml(next.toString())}"><b>${escapeHtml(user.username)}</b></a> ` +
      `${escapeHtml(user.fullName)}<br><small>${escapeHtml(user.description)}</small></li>`
  })
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Dev identity provider: sign in</title>` +
    `<style>body{font-family:system-ui,sans-serif;max-width:44rem;margin:2rem auto;padding:0 1rem}` +
    `li{margin:.6rem 0}small{color:#555}</style></head><body>` +
    `<h1>Sign in to ${escapeHtml(result.client.clientId)}</h1>` +
    `<p>Development identity provider: pick a user from <code>dev/identities.yaml</code>. No password is asked.</p>` +
    `<ul>${rows.join("")}</ul></body></html>`
}

export const makeRequestHandler = (provider: Provider, fallback: RequestListener): RequestListener =>
  (req, res) => {
    const url = new URL(req.url ?? "/", "http://dev-idp.invalid")
    const route = `${req.method ?? "GET"} ${url.pathname.replace(/\/+$/, "") || "/"}`
    const authorization = req.headers.authorization
    const handle = async (): Promise<void> => {
      switch (route) {
        case `GET ${endpoints.discovery}`:
          return send(res, { status: 200, body: provider.discovery() })
        case `GET ${endpoints.jwks}`:
          return send(res, { status: 200, body: { ...provider.jwks() } })
        case `POST ${endpoints.token}`:
          return send(res, await provider.token(await readParams(req), authorization))
        case `POST ${endpoints.introspect}`:
          return send(res, await provider.introspect(await readParams(req), authorization))
        case `GET ${endpoints.userinfo}`:
        case `POST ${endpoints.userinfo}`:
          return send(res, await provider.userinfo(authorization))
        case "GET /health":
          return send(res, { status: 200, body: { status: "ok" } })
        case `GET ${endpoints.authorize}`: {
          const result = provider.authorize(url.searchParams)
          switch (result._tag) {
            case "Error":
              return send(res, { status: result.status, body: { error: "invalid_request", error_description: result.message } })
            case "Login":
              res.writeHead(200, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" })
              res.end(loginPage(url.searchParams, result))
              return
            case "Redirect":
              res.writeHead(302, { location: result.location, "cache-control": "no-store" })
              res.end()
              return
          }
        }
      }
      fallback(req, res)
    }
    handle().catch((error: unknown) => {
      if (res.headersSent) {
        res.destroy()
        return
      }
      if (error instanceof BodyError) {
        send(res, { status: 400, body: { error: "invalid_request", error_description: error.message } })
        return
      }
      send(res, { status: 500, body: { error: "server_error", error_description: String(error) } })
    })
  }
