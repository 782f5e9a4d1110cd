/**
 * Figures of contract-fuzzing runs (`ContractFuzz.run` of `@rec/platform`), added up per service
 * and per mutation kind, and printed as the Markdown tables of docs/reliability.md.
 */
import type { ContractFuzz } from "@rec/platform"

export interface ServiceRun {
  readonly service: string
  /** Who sent the requests (`admin token`, `user token`, `no token`). */
  readonly as: string
  readonly report: ContractFuzz.Report
}

export interface ServiceTotals {
  readonly service: string
  readonly endpoints: number
  readonly requests: number
  readonly statuses: Record<string, number>
  readonly findings: number
}

const add = (into: Record<string, number>, from: Readonly<Record<string, number>>) => {
  for (const [k, v] of Object.entries(from)) into[k] = (into[k] ?? 0) + v
}

export const totals = (runs: ReadonlyArray<ServiceRun>): ReadonlyArray<ServiceTotals> => {
  const by = new Map<string, { endpoints: number; requests: number; statuses: Record<string, number>; findings: number }>()
  for (const run of runs) {
    const t = by.get(run.service) ?? { endpoints: 0, requests: 0, statuses: {}, findings: 0 }
    t.endpoints = Math.max(t.endpoints, run.report.endpoints)
    t.requests += run.report.requests
    add(t.statuses, run.report.statuses)
    t.findings += run.report.findings.length
    by.set(run.service, t)
  }
  return [...by].map(([service, t]) => ({ service, ...t }))
}

/** Answers per mutation kind, every service together: kind → status → count. */
export const byKind = (runs: ReadonlyArray<ServiceRun>): Record<string, Record<string, number>> => {
  const out: Record<string, Record<string, number>> = {}
  for (const run of runs) {
    for (const [kind, statuses] of Object.entries(run.report.byKind)) add((out[kind] ??= {}), statuses)
  }
  return out
}

const statusList = (statuses: Readonly<Record<string, number>>) =>
  Object.entries(statuses)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([status, n]) => `${status}: ${n}`)
    .join(", ")

export const markdown = (runs: ReadonlyArray<ServiceRun>): string => {
  const services = totals(runs)
  const all = services.reduce((n, s) => n + s.requests, 0)
  const lines = [
    "| service | endpoints | requests | 2xx | 3xx | 4xx | 5xx | findings |",
    "|---|---:|---:|---:|---:|---:|---:|---:|",
    ...services.map((s) =>
      `| ${s.service} | ${s.endpoints} | ${s.requests} | ${s.statuses["2xx"] ?? 0} | ${s.statuses["3xx"] ?? 0} | ${s.statuses["4xx"] ?? 0} | ${s.statuses["5xx"] ?? 0} | ${s.findings} |`
    ),
    `| **all** | ${services.reduce((n, s) => n + s.endpoints, 0)} | ${all} | | | | ${services.reduce((n, s) => n + (s.statuses["5xx"] ?? 0), 0)} | ${services.reduce((n, s) => n + s.findings, 0)} |`,
    "",
    "| mutation kind | requests | statuses seen |",
    "|---|---:|---|",
    ...Object.entries(byKind(runs))
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([kind, statuses]) => `| ${kind} | ${Object.values(statuses).reduce((a, b) => a + b, 0)} | ${statusList(statuses)} |`)
  ]
  return lines.join("\n")
}
