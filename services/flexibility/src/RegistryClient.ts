/**
 * `Communities` over the community registry's typed client (`@rec/registry-service`'s `Api`,
 * through `@rec/auth`'s `ServiceClient`), with this service's client-credentials token
 * (`REC_REGISTRY_SCOPE`; the registry shows every community to services with `registry.read`).
 * Every page is read (`next_cursor`); only active members with a platform user are returned.
 */
import { ServiceClient } from "@rec/auth"
import type { Upstream } from "@rec/platform"
import { OutboundHttp } from "@rec/platform"
import { Api as RegistryApi } from "@rec/registry-service/Api"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Communities, type Community, type Member } from "./Communities.js"
import * as Config from "./Config.js"
import * as ServiceTokens from "./ServiceTokens.js"

const pageSize = 500

/** Every page of a cursor-paged list. */
const allPages = <A>(
  page: (cursor: string | undefined) => Effect.Effect<{ readonly items: ReadonlyArray<A>; readonly next_cursor: string | null }, Upstream.UpstreamFailure>
) =>
  Effect.gen(function*() {
    const out: Array<A> = []
    let cursor: string | undefined = undefined
    do {
      const result: { readonly items: ReadonlyArray<A>; readonly next_cursor: string | null } = yield* page(cursor)
      out.push(...result.items)
      cursor = result.next_cursor ?? undefined
    } while (cursor !== undefined)
    return out
  })

export const make = (options: ServiceClient.Options) =>
  Effect.gen(function*() {
    const registry = yield* ServiceClient.make(RegistryApi, options)

    const list = allPages((cursor) =>
      registry.call(
        "list_communities",
        registry.client.registry.listCommunities({ urlParams: { format: "json", limit: pageSize, cursor } })
      )
    ).pipe(
      Effect.map((communities) => communities.map((c): Community => ({ id: c.key }))),
      Effect.withSpan("Communities.list")
    )

    const members = (communityId: string) =>
      allPages((cursor) =>
        registry.call(
          "list_members",
          registry.client.registry.listMembers({ path: { key: communityId }, urlParams: { format: "json", limit: pageSize, cursor } })
        )
      ).pipe(
        Effect.map((all) =>
          all
            .filter((m) => m.status === "active" && m.user_id !== "")
            .map((m): Member => ({ userId: m.user_id, communityId: m.community }))
        ),
        Effect.withSpan("Communities.members", { attributes: { "community.id": communityId } })
      )

    return Communities.of({ list, members })
  })

/** From the environment: `REC_REGISTRY_URL`, `REC_REGISTRY_SCOPE`, `REC_REGISTRY_TIMEOUT`, the service's client. */
export const layer = Layer.effect(
  Communities,
  Effect.gen(function*() {
    const settings = yield* Config.registry
    const tokens = yield* ServiceTokens.forScope(settings.scope)
    return yield* make({ name: "community registry", baseUrl: settings.baseUrl, tokens, timeout: settings.timeout })
  })
).pipe(Layer.provide(OutboundHttp.layer))
