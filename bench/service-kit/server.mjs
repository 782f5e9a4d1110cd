// The servers `run.mjs` measures, one per process: `node server.mjs raw|kit` (PORT from the
// environment). Both answer the same two requests:
//
// - `GET /items/1`: a constant JSON object;
// - `POST /items`: a JSON body `{name, quantity, tags}`, parsed (and, for the kit, decoded with a
//   schema), answered as `{id, name, quantity, tags}`.
//
// `raw` is plain node:http; `kit` is `@rec/platform`'s `ServiceKit.serve` with an `HttpApi`
// contract, run as a service's `main.ts` runs (`ServiceKit.run`: JSON logs, graceful shutdown).
// `KIT_ACCESS_LOG=false` turns the access log line off. Needs a build of packages/platform.
import * as http from "node:http"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")
const mode = process.argv[2] ?? "raw"
const port = Number(process.env.PORT ?? 0)

const raw = () => {
  const item = JSON.stringify({ id: 1, name: "first", quantity: 3, tags: ["a", "b"] })
  const server = http.createServer((request, response) => {
    if (request.method === "GET") {
      response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(item) })
      response.end(item)
      return
    }
    const chunks = []
    request.on("data", (chunk) => chunks.push(chunk))
    request.on("end", () => {
      let body
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"))
      } catch {
        response.writeHead(400, { "content-type": "application/json" }).end('{"detail":"invalid JSON"}')
        return
      }
      const payload = JSON.stringify({ id: 2, name: body.name, quantity: body.quantity, tags: body.tags })
      response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(payload) })
      response.end(payload)
    })
  })
  server.listen(port, "127.0.0.1")
  process.on("SIGTERM", () => process.exit(0))
}

// The kit and Effect are imported from the package's own dependencies (this script lives outside
// the workspace packages), as ESM, so they are the very module instances the kit uses.
const fromPlatform = (file) => import(pathToFileURL(path.join(root, "packages/platform", file)).href)

const kit = async () => {
  const { ServiceKit } = await fromPlatform("dist/index.js")
  const HttpApi = await fromPlatform("node_modules/@effect/platform/dist/esm/HttpApi.js")
  const HttpApiBuilder = await fromPlatform("node_modules/@effect/platform/dist/esm/HttpApiBuilder.js")
  const HttpApiEndpoint = await fromPlatform("node_modules/@effect/platform/dist/esm/HttpApiEndpoint.js")
  const HttpApiGroup = await fromPlatform("node_modules/@effect/platform/dist/esm/HttpApiGroup.js")
  const Effect = await fromPlatform("node_modules/effect/dist/esm/Effect.js")
  const Layer = await fromPlatform("node_modules/effect/dist/esm/Layer.js")
  const Schema = await fromPlatform("node_modules/effect/dist/esm/Schema.js")

  const Item = Schema.Struct({
    id: Schema.Int,
    name: Schema.String,
    quantity: Schema.Int,
    tags: Schema.Array(Schema.String)
  })
  const NewItem = Schema.Struct({ name: Schema.String, quantity: Schema.Int, tags: Schema.Array(Schema.String) })
  const Items = HttpApiGroup.make("items")
    .add(HttpApiEndpoint.get("get", "/items/1").addSuccess(Item))
    .add(HttpApiEndpoint.post("create", "/items").setPayload(NewItem).addSuccess(Item))
  const Api = HttpApi.make("bench").add(Items)
  const first = { id: 1, name: "first", quantity: 3, tags: ["a", "b"] }
  const ItemsLive = HttpApiBuilder.group(Api, "items", (handlers) =>
    handlers
      .handle("get", () => Effect.succeed(first))
      .handle("create", ({ payload }) => Effect.succeed({ id: 2, ...payload })))
  const service = { name: "bench", version: "0.0.0" }
  const HttpLive = ServiceKit.serve(Api, {
    service,
    port,
    accessLog: process.env.KIT_ACCESS_LOG !== "false"
  }).pipe(Layer.provide(ItemsLive))
  ServiceKit.run(HttpLive, service)
}

// Layers of the stack on their own, to see what each costs (`run.mjs --stack`).
const stack = async (layer) => {
  const Effect = await fromPlatform("node_modules/effect/dist/esm/Effect.js")
  const Layer = await fromPlatform("node_modules/effect/dist/esm/Layer.js")
  const Runtime = await fromPlatform("node_modules/effect/dist/esm/Runtime.js")
  const HttpServer = await fromPlatform("node_modules/@effect/platform/dist/esm/HttpServer.js")
  const HttpServerResponse = await fromPlatform("node_modules/@effect/platform/dist/esm/HttpServerResponse.js")
  const HttpServerRequest = await fromPlatform("node_modules/@effect/platform/dist/esm/HttpServerRequest.js")
  const HttpMiddleware = await fromPlatform("node_modules/@effect/platform/dist/esm/HttpMiddleware.js")
  const HttpLayerRouter = await fromPlatform("node_modules/@effect/platform/dist/esm/HttpLayerRouter.js")
  const NodeHttpServer = await fromPlatform("node_modules/@effect/platform-node/dist/esm/NodeHttpServer.js")
  const item = { id: 1, name: "first", quantity: 3, tags: ["a", "b"] }
  // An exit (not death by the signal) writes the --cpu-prof profile.
  process.on("SIGTERM", () => process.exit(0))

  if (layer === "fiber") {
    // node:http, and one fiber per request that produces the answer.
    const runFork = Runtime.runFork(Runtime.defaultRuntime)
    const server = http.createServer((request, response) => {
      const chunks = []
      request.on("data", (chunk) => chunks.push(chunk))
      request.on("end", () => {
        runFork(Effect.sync(() => {
          const payload = JSON.stringify(request.method === "GET" ? item : { id: 2, ...JSON.parse(Buffer.concat(chunks).toString("utf8")) })
          response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(payload) })
          response.end(payload)
        }))
      })
    })
    server.listen(port, "127.0.0.1")
    return
  }

  const app = Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
    request.method === "GET"
      ? Effect.succeed(HttpServerResponse.unsafeJson(item))
      : Effect.map(Effect.orDie(request.json), (body) => HttpServerResponse.unsafeJson({ id: 2, ...body })))
  const server = NodeHttpServer.layer(http.createServer, { port, host: "127.0.0.1" })
  const noTracer = HttpMiddleware.withTracerDisabledWhen(() => true)
  let served
  if (layer === "platform") served = HttpServer.serve(app)
  else if (layer === "platform-no-tracer") served = noTracer(HttpServer.serve(app))
  else if (layer === "router") {
    const routes = Layer.mergeAll(
      HttpLayerRouter.add("GET", "/items/1", app),
      HttpLayerRouter.add("POST", "/items", app)
    )
    served = noTracer(HttpLayerRouter.serve(routes, { disableLogger: true, disableListenLog: true }))
  } else if (layer === "kit-handler") {
    // The kit's request handler around the same trivial app, on the kit's Node server.
    const { NodeServer, RequestHandler } = await fromPlatform("dist/index.js")
    const FileSystem = await fromPlatform("node_modules/@effect/platform/dist/esm/FileSystem.js")
    const handlerOptions = {
      errorStyle: "platform",
      maxBodySize: FileSystem.Size(10 * 1024 * 1024),
      accessLog: false,
      quietPaths: new Set(),
      tracing: false,
      cors: undefined
    }
    const handled = Layer.scopedDiscard(Effect.flatMap(RequestHandler.make(app, handlerOptions), NodeServer.listen))
    Layer.launch(Layer.provide(handled, NodeServer.layer({ port, host: "127.0.0.1", shutdownTimeout: "1 second" }))).pipe(Effect.runFork)
    return
  } else if (layer === "kit-router") {
    // The kit with the trivial app as raw routes (no HttpApi endpoint involved).
    const { ServiceKit } = await fromPlatform("dist/index.js")
    const HttpApi = await fromPlatform("node_modules/@effect/platform/dist/esm/HttpApi.js")
    const routes = Layer.mergeAll(
      HttpLayerRouter.add("GET", "/items/1", app),
      HttpLayerRouter.add("POST", "/items", app)
    )
    const service = { name: "bench", version: "0.0.0" }
    ServiceKit.run(ServiceKit.serve(HttpApi.make("empty"), { service, port, routes, accessLog: false }), service)
    return
  } else {
    console.error(`unknown layer ${layer}`)
    process.exit(2)
  }
  Layer.launch(Layer.provide(served, server)).pipe(Effect.runFork)
}

if (mode === "raw") raw()
else if (mode === "kit") await kit()
else if (mode.startsWith("stack:")) await stack(mode.slice("stack:".length))
else {
  console.error(`unknown mode ${mode}: raw, kit or stack:<layer>`)
  process.exit(2)
}
