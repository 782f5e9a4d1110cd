/**
 * How each endpoint's request becomes a policy question: the package and the input document
 * (`@rec/policy`'s `PolicyInput`). Pure functions, so the mapping is testable without HTTP.
 *
 * | endpoint | package | resource | action |
 * |---|---|---|---|
 * | /authorize | by `resource.type` (`Domain.packages`) | as sent | as sent; `context` goes to `environment` |
 * | /dataset/access | rec.dataset.access | dataset, attributes {access_level} | read/write/admin |
 * | /dataset/filters | rec.dataset.row_filter | dataset, attributes {access_level} | filters |
 * | /pipeline/transition | rec.pipeline.state | pipeline | transition, context {from_state, to_state} |
 * | /dt/access | rec.dt.access | dt | read/write/simulate/admin |
 * | /dt/event | rec.dt.access | dt | emit_event, context {event_type, simulation_state} |
 * | /userdata/access | rec.userdata.access | userdata, attributes {resource_type, owner_id, shared_with, shared_with_groups, visibility} | read/write/delete/share |
 * | /mqtt/acl, /mqtt/superuser | rec.mqtt.acl | topic, attributes {clientid} | subscribe/publish/read, superuser |
 */
import { PolicyInput } from "@rec/policy"
import type * as Domain from "./Domain.js"
import { packages, rowFilterPackage } from "./Domain.js"

export interface Question {
  readonly package: string
  readonly input: PolicyInput.PolicyInput
}

type Subject = PolicyInput.PolicySubject | null

const input = (
  subject: Subject,
  requestId: string,
  resource: { type: string; id: string; attributes?: Record<string, unknown> },
  action: { name: string; context?: Record<string, unknown> },
  environment?: Record<string, unknown>
): PolicyInput.PolicyInput => PolicyInput.make({ subject, resource, action, requestId, environment })

export const authorize = (
  subject: Subject,
  requestId: string,
  type: Domain.ResourceType,
  body: typeof Domain.AuthorizeRequest.Type
): Question => ({
  package: packages[type],
  input: input(subject, requestId, body.resource, body.action, body.context)
})

/** The dataset both dataset endpoints ask about. */
const datasetResource = (body: { readonly dataset_id: string; readonly access_level: string }) => ({
  type: "dataset",
  id: body.dataset_id,
  attributes: { access_level: body.access_level }
})

export const datasetAccess = (
  subject: Subject,
  requestId: string,
  body: typeof Domain.DatasetAccessRequest.Type
): Question => ({
  package: packages.dataset,
  input: input(subject, requestId, datasetResource(body), { name: body.action })
})

export const datasetFilters = (
  subject: Subject,
  requestId: string,
  body: typeof Domain.DatasetFiltersRequest.Type
): Question => ({
  package: rowFilterPackage,
  input: input(subject, requestId, datasetResource(body), { name: "filters" })
})

export const pipelineTransition = (
  subject: Subject,
  requestId: string,
  body: typeof Domain.PipelineTransitionRequest.Type
): Question => ({
  package: packages.pipeline,
  input: input(subject, requestId, { type: "pipeline", id: body.pipeline_id }, {
    name: "transition",
    context: { from_state: body.from_state, to_state: body.to_state }
  })
})

export const dtAccess = (subject: Subject, requestId: string, body: typeof Domain.DtAccessRequest.Type): Question => ({
  package: packages.dt,
  input: input(subject, requestId, { type: "dt", id: body.dt_id }, { name: body.action })
})

export const dtEvent = (subject: Subject, requestId: string, body: typeof Domain.DtEventRequest.Type): Question => ({
  package: packages.dt,
  input: input(subject, requestId, { type: "dt", id: body.dt_id }, {
    name: "emit_event",
    context: { event_type: body.event_type, simulation_state: body.simulation_state }
  })
})

export const userdataAccess = (
  subject: Subject,
  requestId: string,
  body: typeof Domain.UserdataAccessRequest.Type
): Question => {
  const attributes: Record<string, unknown> = { resource_type: body.resource_type, owner_id: body.owner_id }
  if (body.shared_with !== undefined) attributes.shared_with = body.shared_with
  if (body.shared_with_groups !== undefined) attributes.shared_with_groups = body.shared_with_groups
  if (body.visibility !== undefined) attributes.visibility = body.visibility
  return {
    package: packages.userdata,
    input: input(subject, requestId, { type: "userdata", id: body.resource_id, attributes }, { name: body.action })
  }
}

export const mqttTopic = (
  subject: Subject,
  requestId: string,
  options: { readonly topic: string; readonly clientid: string; readonly action: string }
): Question => ({
  package: packages.topic,
  input: input(
    subject,
    requestId,
    { type: "topic", id: options.topic, attributes: { clientid: options.clientid } },
    { name: options.action }
  )
})
