/**
 * The OpenAPI description of the assistant proxy (`AssistantProxy`), which is a raw route rather
 * than a contract endpoint: it streams both ways and passes the assistant's answers through
 * whatever they are, which no endpoint schema can say. The contract carries this as its
 * `OpenApi.Transform`, so `/api/openapi.json`, `/api/docs` and `ContractCheck` see the route.
 */

const errorBody = { $ref: "#/components/schemas/ErrorBody" }
const errorContent = { "application/json": { schema: errorBody } }

const description = [
  "Proxied to the assistant at `{ASSISTANT_URL}/api/{path}` with the caller's access token; the query string is",
  "kept. `path` may have several segments (`conversations/<id>/messages`, `attachments/<id>/raw`); a path that",
  "tries to leave `/api/` (a `.` or `..` segment, also percent-encoded, or an encoded `/` or `\\`) is refused",
  "with 400. Answers are passed through as the assistant gives them (status, headers, body) and streamed without",
  "buffering: the chat's `text/event-stream` reaches the browser frame by frame, a file download byte for byte.",
  "Request bodies are streamed too (multipart uploads); a JSON body is checked first (syntax, nesting) as on",
  "every endpoint of the platform. Hop-by-hop headers, cookies and the caller's credentials headers are not",
  "forwarded (the token goes as `Authorization: Bearer`). The assistant unreachable: 502; no answer within",
  "ASSISTANT_TIMEOUT: 504."
].join(" ")

const pathParameter = {
  name: "path",
  in: "path",
  required: true,
  description: "The assistant's path below `/api/`, e.g. `chat`, `conversations`, `conversations/<id>/messages`",
  schema: { type: "string", minLength: 1 },
  examples: { chat: { value: "chat" }, conversations: { value: "conversations" } }
}

const responses = (withBody: boolean) => ({
  "200": {
    description: "The assistant's answer, passed through: JSON, the chat's `text/event-stream`, or a file",
    content: {
      "application/json": { schema: {} },
      "text/event-stream": { schema: { type: "string" } },
      "application/octet-stream": { schema: { type: "string", format: "binary" } }
    }
  },
  "2XX": { description: "Another success of the assistant, passed through (201 for an upload, ...)" },
  "400": {
    description: "The path tries to leave `/api/`" + (withBody ? ", the JSON body is invalid or nested too deeply" : "") +
      ", or the assistant refused the request",
    content: errorContent
  },
  "401": { description: "Missing or invalid credentials", content: errorContent },
  "403": { description: "Only users may use the gateway, or the assistant refused", content: errorContent },
  "4XX": { description: "The assistant's refusal, passed through (404 for another user's conversation, ...)", content: errorContent },
  "502": { description: "The assistant is unreachable", content: errorContent },
  "503": { description: "The identity provider's keys or the access policies are unavailable", content: errorContent },
  "504": { description: "The assistant did not start answering within ASSISTANT_TIMEOUT", content: errorContent },
  "5XX": { description: "The assistant's own server error, passed through", content: errorContent }
})

const operation = (
  method: "get" | "post" | "delete",
  security: ReadonlyArray<unknown> | undefined,
  withBody: boolean
) => ({
  tags: ["Assistant"],
  operationId: `assistant.proxy${method[0]!.toUpperCase()}${method.slice(1)}`,
  summary: `${method.toUpperCase()} an assistant path (streaming proxy)`,
  description,
  parameters: [pathParameter],
  ...(security === undefined ? {} : { security }),
  ...(withBody
    ? {
      requestBody: {
        required: false,
        content: {
          "application/json": { schema: {} },
          "multipart/form-data": { schema: { type: "object" } }
        }
      }
    }
    : {}),
  responses: responses(withBody)
})

interface Spec {
  readonly paths: Record<string, Record<string, { readonly security?: ReadonlyArray<unknown> }>>
  tags?: Array<{ readonly name: string; readonly description?: string }>
}

/** Adds `/api/assistant/{path}` (GET, POST, DELETE) with the security of the contract's routes. */
export const transform = (input: Record<string, unknown>): Record<string, unknown> => {
  const spec = input as unknown as Spec
  // The contract's own routes all need the same token; the proxy needs it too.
  const security = Object.values(spec.paths)
    .flatMap((item) => Object.values(item))
    .map((op) => op.security)
    .find((s) => s !== undefined && s.length > 0)
  spec.paths["/api/assistant/{path}"] = {
    get: operation("get", security, false),
    post: operation("post", security, true),
    delete: operation("delete", security, false)
  }
  spec.tags = [...(spec.tags ?? []), { name: "Assistant", description: "The assistant, through this gateway" }]
  return input
}
