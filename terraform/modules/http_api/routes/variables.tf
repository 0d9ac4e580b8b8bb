variable "api_id" {
  description = "Id of the HTTP API the routes go on (module http_api makes one; tier 2's admin routes go on tier 1's admin API, output admin_api_id)."
  type        = string
}

variable "execution_arn" {
  description = "Execution ARN of that API, for the invoke permissions' source ARNs."
  type        = string
}

variable "function_name" {
  description = "The Lambda function every route invokes (AWS_PROXY, payload 2.0): its name, for the invoke permissions."
  type        = string
}

variable "invoke_arn" {
  description = "The Lambda function's invoke ARN (module lambda output invoke_arn)."
  type        = string
}

variable "integration_timeout_ms" {
  description = "Integration timeout in milliseconds (at most API Gateway's 30 s; the function's own timeout or less)."
  type        = number

  validation {
    condition     = var.integration_timeout_ms >= 50 && var.integration_timeout_ms <= 30000
    error_message = "integration_timeout_ms must be between 50 and 30000."
  }
}

variable "routes" {
  description = <<-EOT
    Explicit routes (no proxy), by a short name: route_key ("POST /vwr/assign/{eventId}") and
    authorization: "NONE", "AWS_IAM", or "JWT" / "CUSTOM" with `authorizer` naming an entry of
    var.authorizers of type JWT / REQUEST (and, for JWT, optional `scopes`). Optional `throttle`
    {rate, burst}: this route's own limits on the stage (default: the stage's throttle).
    tests/infra checks the route keys against the Rust routers and the admin routes' authorization.
  EOT
  type = map(object({
    route_key     = string
    authorization = string
    authorizer    = optional(string)
    scopes        = optional(list(string))
    throttle = optional(object({
      rate  = number
      burst = number
    }))
  }))

  validation {
    condition     = alltrue([for r in values(var.routes) : contains(["NONE", "AWS_IAM", "JWT", "CUSTOM"], r.authorization)])
    error_message = "Each route's authorization must be NONE, AWS_IAM, JWT or CUSTOM."
  }
  validation {
    condition     = alltrue([for r in values(var.routes) : (r.authorizer != null) == contains(["JWT", "CUSTOM"], r.authorization)])
    error_message = "A JWT or CUSTOM route names its authorizer; a NONE or AWS_IAM route names none."
  }
  validation {
    condition     = alltrue([for r in values(var.routes) : r.scopes == null || r.authorization == "JWT"])
    error_message = "Only JWT routes have scopes."
  }
  validation {
    condition     = alltrue([for r in values(var.routes) : r.throttle == null ? true : r.throttle.rate > 0 && r.throttle.burst > 0])
    error_message = "A route's throttle rate and burst must be positive."
  }
}

variable "authorizers" {
  description = <<-EOT
    Authorizers of the API, by name, for the routes' `authorizer`. type "JWT": issuer and
    audience (an identity provider's tokens, checked by API Gateway). type "REQUEST": a Lambda
    authorizer (function_name, invoke_arn; payload 2.0, simple responses, result_ttl_seconds of
    caching, 0 = none), which API Gateway is allowed to invoke. identity_sources as API Gateway
    writes them ("$request.header.Authorization").
  EOT
  type = map(object({
    type               = string
    identity_sources   = list(string)
    issuer             = optional(string)
    audience           = optional(list(string))
    function_name      = optional(string)
    invoke_arn         = optional(string)
    result_ttl_seconds = optional(number, 0)
  }))
  default = {}

  validation {
    condition = alltrue([
      for a in values(var.authorizers) :
      a.type == "JWT" ? a.issuer != null && a.audience != null : a.type == "REQUEST" && a.function_name != null && a.invoke_arn != null
    ])
    error_message = "An authorizer is JWT (with issuer and audience) or REQUEST (with function_name and invoke_arn)."
  }
}

variable "existing_authorizers" {
  description = "Authorizers already on the API (made by another call, e.g. module http_api's output authorizer_ids) that routes may name like those of var.authorizers: name → {id, type (JWT or REQUEST)}. Routes of two Lambdas on one API share one authorizer so."
  type = map(object({
    id   = string
    type = string
  }))
  default = {}

  validation {
    condition     = alltrue([for a in values(var.existing_authorizers) : contains(["JWT", "REQUEST"], a.type)])
    error_message = "An existing authorizer's type is JWT or REQUEST."
  }
}

variable "invoke_permissions" {
  description = "API Gateway's permissions to invoke the function: statement id → the source ARN under the API's execution ARN, `<stage>/<method>/<path>` with `*` wildcards (\"*/*/api/queue/*\"). null = one permission per route, statement id `apigw-<route name>`, limited to the route's method and path (parameters as `*`)."
  type        = map(string)
  default     = null
}
