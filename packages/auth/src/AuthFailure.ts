/**
 * Why a request could not be authenticated. Every reason has a fixed, client-safe message; the
 * underlying error (jose's, the HTTP client's) stays in `cause` for the logs.
 */
import * as Data from "effect/Data"

export type AuthFailureReason =
  | "missing_token"
  /** `Authorization` present but not `Bearer <token>`. */
  | "invalid_authorization_header"
  | "malformed_token"
  | "expired"
  | "not_yet_valid"
  | "bad_signature"
  | "wrong_issuer"
  | "wrong_audience"
  /** A signed token of the identity provider that is not an access token (an ID, refresh or logout token). */
  | "wrong_token_type"
  | "unknown_key"
  | "algorithm_not_allowed"
  | "missing_claim"
  | "invalid_claims"
  /** The identity provider's keys could not be fetched: not the caller's fault (503). */
  | "key_set_unavailable"

export const messages: Readonly<Record<AuthFailureReason, string>> = {
  missing_token: "Missing bearer token",
  invalid_authorization_header: "Invalid authorization header format",
  malformed_token: "Malformed token",
  expired: "Token has expired",
  not_yet_valid: "Token is not yet valid",
  bad_signature: "Token signature is invalid",
  wrong_issuer: "Invalid issuer",
  wrong_audience: "Invalid audience",
  wrong_token_type: "Token is not an access token",
  unknown_key: "Token is signed with an unknown key",
  algorithm_not_allowed: "Token algorithm is not allowed",
  missing_claim: "Token is missing a required claim",
  invalid_claims: "Token claims are invalid",
  key_set_unavailable: "The identity provider's signing keys are unavailable"
}

export class AuthFailure extends Data.TaggedError("AuthFailure")<{
  readonly reason: AuthFailureReason
  /** Client-safe text; defaults to `messages[reason]`. */
  readonly message: string
  readonly cause?: unknown
}> {
  static of(reason: AuthFailureReason, options?: { readonly message?: string; readonly cause?: unknown }) {
    return new AuthFailure({ reason, message: options?.message ?? messages[reason], cause: options?.cause })
  }

  /** True when the caller could fix it by sending another token (401), not an outage (503). */
  get isCredentialProblem(): boolean {
    return this.reason !== "key_set_unavailable"
  }
}
