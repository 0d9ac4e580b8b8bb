variable "name" {
  description = "Name of the HTTP API (its CloudWatch ApiName; `vwr preflight` finds the API by it)."
  type        = string
}

variable "description" {
  description = "Description of the HTTP API."
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
  description = "Integration timeout in milliseconds, 50 to 30000 (module http_api/routes checks it)."
  type        = number
}

variable "routes" {
  description = "The API's routes, by a short name: {route_key, authorization, authorizer, scopes, throttle} as module http_api/routes (its variables.tf) reads them, where they are typed and validated. A route's throttle goes on this API's stage."
  type        = any
}

variable "authorizers" {
  description = "Authorizers of the API, by name, for the routes' `authorizer`: as module http_api/routes reads them (JWT: issuer, audience; REQUEST: a Lambda)."
  type        = any
  default     = {}
}

variable "invoke_permissions" {
  description = "API Gateway's permissions to invoke the function: statement id → the source ARN under the API's execution ARN, `<stage>/<method>/<path>` with `*` wildcards (\"*/*/api/queue/*\"). null = one permission per route, statement id `apigw-<route name>`, limited to the route's method and path (parameters as `*`)."
  type        = map(string)
  default     = null
}

variable "throttle" {
  description = "The stage's default route throttle, {rate (steady requests per second), burst}, each route on its own."
  type = object({
    rate  = number
    burst = number
  })

  validation {
    condition     = var.throttle.rate > 0 && var.throttle.burst > 0
    error_message = "throttle rate and burst must be positive (a stage without throttling is limited only by the account)."
  }
}

variable "access_log" {
  description = "The stage's access log: the log group's name and retention, and fields (name → $context variable) added to the module's JSON line (requestId, time, method, route, status, latencyMs, error)."
  type = object({
    group_name     = string
    retention_days = number
    fields         = optional(map(string), {})
  })
}

variable "cors" {
  description = "CORS of the API, answered by API Gateway itself (preflight OPTIONS included, before any authorizer): the origins, methods and request headers allowed, and how long a browser may cache a preflight. null = no CORS (callers that are not browsers: CloudFront, `vwr admin --sigv4`)."
  type = object({
    allow_origins   = list(string)
    allow_methods   = list(string)
    allow_headers   = list(string)
    max_age_seconds = optional(number, 3600)
  })
  default = null

  validation {
    condition     = var.cors == null ? true : alltrue([for o in var.cors.allow_origins : can(regex("^https://[^/*\\s]+$", o))])
    error_message = "cors.allow_origins are https:// origins (scheme and host, no path, no wildcard)."
  }
}

variable "kms_key_arn" {
  description = "Customer managed KMS key for the access log group (null = CloudWatch Logs' own encryption)."
  type        = string
  default     = null
}

variable "tags" {
  description = "Tags of the API, its stage and log group."
  type        = map(string)
  default     = {}
}
