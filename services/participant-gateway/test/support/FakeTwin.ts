/**
 * The digital twin as the gateway's `TwinClient` sees it, kept in memory for handler tests:
 * profiles (with or without membership), assets, and 15-minute readings made by a function of the
 * interval, so a test knows the sums to expect. `fail(operation, status)` makes an operation fail
 * as the typed client would report it (`Clients.fromTwinError`).
 */
import type { EnergySchemas } from "@rec/digital-twin"
import { DigitalTwinError } from "@rec/digital-twin"
import { Clients } from "@rec/participant-gateway-service"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Redacted from "effect/Redacted"

export type Operation = "profile" | "assets" | "meters_data" | "rec_virtual_consumption_per_device_15m"

export interface Reading {
  readonly production: number
  readonly consumption: number
  readonly shared: number
}

export class TwinState {
  readonly profiles = new Map<string, EnergySchemas.Profile>()
  readonly assets = new Map<string, EnergySchemas.AssetList>()
  /** Readings per 15-minute interval start (ms), for every device. */
  reading: (start: number) => Reading = () => ({ production: 0.25, consumption: 0.5, shared: 0.1 })
  readonly calls: Array<{ readonly operation: Operation; readonly sub: string; readonly payload?: unknown }> = []
  private readonly failures = new Map<Operation, number>()
  /** Milliseconds an operation takes before it answers (none: at once). */
  readonly delays = new Map<Operation, number>()
  /** `start <operation>` and `end <operation>`, in the order they happened. */
  readonly events: Array<string> = []

  fail(operation: Operation, status: number): void {
    this.failures.set(operation, status)
  }

  heal(): void {
    this.failures.clear()
  }

  member(sub: string, community = "it-energy-community", meter: string | null = `meter-${sub}`): void {
    this.profiles.set(sub, {
      participant_id: sub,
      name: "Giulia Romano",
      membership: {
        community: { key: community, name: "Comunità Energetica Alto Garda", country: "it" },
        member: { key: `member-${sub}`, name: "Giulia Romano", role: "prosumer", since: "2025-01-01" }
      }
    })
    const items: Array<EnergySchemas.Asset> = [
      { key: "pv", name: "PV", asset_type: "pv_plant", sensor_id: null, device: null },
      ...(meter === null ? [] : [{ key: "meter", name: "Meter", asset_type: "meter", sensor_id: meter, device: null }])
    ]
    this.assets.set(sub, { items, count: items.length })
  }

  /** A participant of the twin who belongs to no community. */
  outsider(sub: string): void {
    this.profiles.set(sub, { participant_id: sub, name: "Nadia Fontana", membership: null })
    this.assets.set(sub, { items: [], count: 0 })
  }

  private run<A>(operation: Operation, sub: string, payload: unknown, answer: () => A | undefined) {
    return Effect.suspend(() => {
      this.calls.push({ operation, sub, payload })
      const status = this.failures.get(operation)
      if (status !== undefined) {
        return Effect.fail(Clients.fromTwinError(new DigitalTwinError({ operation, status, message: `The digital twin answered ${status}` })))
      }
      const value = answer()
      const result = value === undefined
        ? Effect.fail(Clients.fromTwinError(new DigitalTwinError({ operation, status: 404, message: "The digital twin answered NotFound" })))
        : Effect.succeed(value)
      const delay = this.delays.get(operation)
      this.events.push(`start ${operation}`)
      return (delay === undefined ? result : Effect.delay(result, delay)).pipe(
        Effect.ensuring(Effect.sync(() => this.events.push(`end ${operation}`)))
      )
    })
  }

  /** The intervals of [start, end). */
  intervals(start: DateTime.Utc, end: DateTime.Utc): Array<number> {
    const out: Array<number> = []
    for (let t = DateTime.toEpochMillis(start); t < DateTime.toEpochMillis(end); t += 15 * 60_000) out.push(t)
    return out
  }

  layer(): Layer.Layer<Clients.TwinClient> {
    return Layer.succeed(Clients.TwinClient, {
      profile: (_token: Redacted.Redacted, sub) => this.run("profile", sub, undefined, () => this.profiles.get(sub)),
      assets: (_token, sub) => this.run("assets", sub, undefined, () => this.assets.get(sub) ?? { items: [], count: 0 }),
      meterTotals: (_token, sub, payload) =>
        this.run("meters_data", sub, payload, () => {
          const rows = this.intervals(payload.start, payload.end).map((t) => this.reading(t))
          return {
            rows: rows.length,
            limit: 40_000,
            production_kwh: rows.reduce((sum, r) => sum + r.production, 0),
            consumption_kwh: rows.reduce((sum, r) => sum + r.consumption, 0)
          }
        }),
      sharedTotals: (_token, sub, payload) =>
        this.run("rec_virtual_consumption_per_device_15m", sub, payload, () => {
          const rows = this.intervals(payload.start, payload.end).map((t) => this.reading(t))
          return {
            rows: rows.length,
            limit: 40_000,
            consumption_kwh: rows.reduce((sum, r) => sum + r.consumption, 0),
            virtual_consumption_kwh: rows.reduce((sum, r) => sum + r.shared, 0)
          }
        })
    })
  }
}
