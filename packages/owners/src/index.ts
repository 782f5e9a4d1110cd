/**
 * @rec/owners: the owner registry (`owners.yaml` + `owners.local.yaml`): schema, loader,
 * lookups, JSON-LD rendering and identity-provider organization sync.
 */
export * from "./Config.js"
export * from "./JsonLd.js"
export * from "./KeycloakOrganizations.js"
export * from "./KeycloakSettings.js"
export * from "./Loader.js"
export * from "./OrganizationSync.js"
export * from "./OwnerSchema.js"
export * from "./Owners.js"
export * from "./Problem.js"
export * from "./Registry.js"
