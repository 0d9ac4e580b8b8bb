variable "name" {
  description = "Prefix of every resource name (table, functions, APIs, secret)."
  type        = string
  default     = "vwr"

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{1,30}$", var.name))
    error_message = "name must be 2-31 characters of a-z 0-9 -, starting with a letter."
  }
}

variable "dist_dir" {
  description = "Path of the dist/ directory written by scripts/package.sh."
  type        = string
}

variable "architecture" {
  description = "Instruction set of the Lambda zips (the `architecture` of dist/manifest.json)."
  type        = string
  default     = "x86_64"

  validation {
    condition     = contains(["x86_64", "arm64"], var.architecture)
    error_message = "architecture must be x86_64 or arm64."
  }
}

variable "key_ids" {
  description = "Tier-1 HMAC key ids; a 32-byte key is generated for each. The first one signs, the others only verify. Rotate: append a new id and apply, then move it first and apply, and drop the old id after the longest ticket/token lifetime (24 h by default)."
  type        = list(string)
  default     = ["k1"]

  validation {
    condition     = length(var.key_ids) >= 1 && length(var.key_ids) <= 20 && length(distinct(var.key_ids)) == length(var.key_ids) && alltrue([for k in var.key_ids : can(regex("^[A-Za-z0-9_-]{1,32}$", k))])
    error_message = "key_ids must hold 1-20 distinct ids of 1-32 characters of A-Z a-z 0-9 _ -."
  }
}

variable "token_issuer" {
  description = "`iss` of tier-1 tokens (VWR_TOKEN_ISSUER); the edge verifier is configured with the same value."
  type        = string
  default     = "vwr"
}

variable "token_audience" {
  description = "`aud` of tier-1 tokens (VWR_TOKEN_AUDIENCE); the edge verifier is configured with the same value."
  type        = string
  default     = "vwr-edge"
}

variable "cookie_prefix" {
  description = "Tier-1 cookie name prefix (VWR_COOKIE_PREFIX); the cookie is prefix + event id."
  type        = string
  default     = "vwr_t1_"

  validation {
    condition     = can(regex("^[A-Za-z0-9_-]{1,32}$", var.cookie_prefix))
    error_message = "cookie_prefix must be 1-32 characters of A-Z a-z 0-9 _ -."
  }
}

variable "ticket_ttl_seconds" {
  description = "Lifetime of a requestId (VWR_TICKET_TTL_SECONDS)."
  type        = number
  default     = 86400

  validation {
    condition     = var.ticket_ttl_seconds >= 60 && var.ticket_ttl_seconds <= 604800
    error_message = "ticket_ttl_seconds must be between 60 and 604800."
  }
}

variable "cache_ttl_ms" {
  description = "Per-instance event / serving-counter cache of the API (VWR_CACHE_TTL_MS, 0-1000)."
  type        = number
  default     = 1000

  validation {
    condition     = var.cache_ttl_ms >= 0 && var.cache_ttl_ms <= 1000
    error_message = "cache_ttl_ms must be between 0 and 1000."
  }
}

variable "advancer_tick_seconds" {
  description = "How often the advancer looks for due steps within its one-minute run (VWR_ADVANCER_TICK_SECONDS, 1-10)."
  type        = number
  default     = 1

  validation {
    condition     = var.advancer_tick_seconds >= 1 && var.advancer_tick_seconds <= 10
    error_message = "advancer_tick_seconds must be between 1 and 10."
  }
}

variable "api_memory_mb" {
  description = "Memory of the public API function."
  type        = number
  default     = 256
}

variable "api_reserved_concurrency" {
  description = "Reserved concurrency of the public API function (-1 = unreserved). A cap keeps a spike from taking the whole account's concurrency."
  type        = number
  default     = -1

  validation {
    condition     = var.api_reserved_concurrency >= -1
    error_message = "api_reserved_concurrency must be -1 or >= 0."
  }
}

variable "api_throttle_rate" {
  description = "Steady-state requests per second the public API stage accepts (per route) before answering 429."
  type        = number
  default     = 10000

  validation {
    condition     = var.api_throttle_rate > 0
    error_message = "api_throttle_rate must be positive (a stage without throttling is limited only by the account)."
  }
}

variable "api_throttle_burst" {
  description = "Burst of the public API stage (per route)."
  type        = number
  default     = 5000

  validation {
    condition     = var.api_throttle_burst > 0
    error_message = "api_throttle_burst must be positive."
  }
}

variable "admin_throttle_rate" {
  description = "Steady-state requests per second of the admin API stage (per route; tier-1 and tier-2 admin routes)."
  type        = number
  default     = 50

  validation {
    condition     = var.admin_throttle_rate > 0
    error_message = "admin_throttle_rate must be positive."
  }
}

variable "admin_throttle_burst" {
  description = "Burst of the admin API stage (per route)."
  type        = number
  default     = 20

  validation {
    condition     = var.admin_throttle_burst > 0
    error_message = "admin_throttle_burst must be positive."
  }
}

variable "admin_principal_patterns" {
  description = "Optional allow-list of IAM principal ARN patterns for the admin routes (VWR_ADMIN_PRINCIPALS, comma-joined; `*` matches any run of characters), e.g. [\"arn:aws:iam::123456789012:role/ops-*\", \"arn:aws:sts::123456789012:assumed-role/ops/*\"]. [] = any principal IAM lets through the admin API's AWS_IAM auth."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for p in var.admin_principal_patterns : can(regex("^arn:[^,\\s]+$", p))])
    error_message = "admin_principal_patterns must be ARN patterns (starting with arn:) without commas or spaces."
  }
}

variable "admin_groups_claim" {
  description = "The JWT claim holding a console caller's groups (VWR_ADMIN_GROUPS_CLAIM): `vwr-viewer`, `vwr-operator`, `vwr-admin` give the role (docs/console.md). Cognito's is cognito:groups; another OIDC issuer's is its own (e.g. groups); give every tier module the same."
  type        = string
  default     = "cognito:groups"

  validation {
    condition     = can(regex("^\\S+$", var.admin_groups_claim))
    error_message = "admin_groups_claim is a claim name: not empty, no spaces."
  }
}

variable "table_deletion_protection" {
  description = "Refuse to delete the DynamoDB table (turn off only to tear down a test stack)."
  type        = bool
  default     = true
}

variable "edge_kvs_arn" {
  description = "ARN of the edge KeyValueStore whose `config.events` the admin function and the advancer keep in step with activations (VWR_EDGE_KVS_ARN; read/write on that store only). null = none."
  type        = string
  default     = null
}

variable "health_alarm_names" {
  description = "CloudWatch metric alarms (names, in this account and region) that hold the advancer for EVERY event while in ALARM: nobody new is let in, everybody keeps their place (docs/outflow.md#health-gate). Part of VWR_HEALTH_ALARMS; the advancer may call cloudwatch:DescribeAlarms on exactly these alarms. [] = none."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for n in var.health_alarm_names : length(n) >= 1 && length(n) <= 255 && n == trimspace(n) && !can(regex("[,=[:cntrl:]]", n))])
    error_message = "health_alarm_names must be alarm names of 1-255 characters without commas, '=', control characters or leading/trailing spaces (the VWR_HEALTH_ALARMS syntax)."
  }
}

variable "standby_alarm_names" {
  description = "CloudWatch metric alarms (names, in this account and region) that standby events may wait for (PUT /api/admin/vwr/standby/{eventId} {alarm}; docs/lifecycle.md#standby): the advancer and the admin function may call cloudwatch:DescribeAlarms on exactly these. PUT refuses an alarm not listed here (400 standby_alarm_unreadable); status shows standbyAlarmState. [] = none."
  type        = list(string)
  default     = []
  validation {
    condition     = alltrue([for n in var.standby_alarm_names : length(n) >= 1 && length(n) <= 255 && !can(regex("[[:cntrl:]]", n))])
    error_message = "standby_alarm_names must be alarm names of 1-255 characters without control characters."
  }
}

variable "health_alarms_by_event" {
  description = "CloudWatch metric alarms that hold ONE event's advancer while in ALARM: event id -> alarm names, e.g. { \"concert-1\" = [\"concert-1-checkout-5xx\"] }. Joined with health_alarm_names into VWR_HEALTH_ALARMS as eventId=AlarmName entries."
  type        = map(list(string))
  default     = {}

  validation {
    condition     = alltrue([for e in keys(var.health_alarms_by_event) : can(regex("^[A-Za-z0-9_-]{1,64}$", e))])
    error_message = "health_alarms_by_event keys must be event ids: 1-64 characters of A-Z a-z 0-9 _ -."
  }

  validation {
    condition     = alltrue([for n in flatten(values(var.health_alarms_by_event)) : length(n) >= 1 && length(n) <= 255 && n == trimspace(n) && !can(regex("[,=[:cntrl:]]", n))])
    error_message = "health_alarms_by_event values must be alarm names of 1-255 characters without commas, '=', control characters or leading/trailing spaces."
  }
}

variable "kms_key_arn" {
  description = "Optional customer managed KMS key for the table, the secret, logs and environment variables (null = AWS owned / managed keys)."
  type        = string
  default     = null
}

variable "log_retention_days" {
  description = "Retention of the function and API access log groups."
  type        = number
  default     = 30
}

variable "log_level" {
  description = "RUST_LOG filter of the functions."
  type        = string
  default     = "info"
}

variable "tags" {
  description = "Tags for every resource."
  type        = map(string)
  default     = {}
}

variable "enqueue_jwks" {
  description = "The site's public keys (a JWKS with EC P-256 keys that have a kid) for enqueue tokens: events with enqueueTokenRequired give one place per site account (docs/abuse.md). null = no enqueue tokens."
  type        = string
  default     = null

  validation {
    condition     = var.enqueue_jwks == null || can(jsondecode(var.enqueue_jwks).keys)
    error_message = "enqueue_jwks must be a JWKS document: {\"keys\": [...]}."
  }
}

variable "tier2_jwks" {
  description = "Tier 2's public keys (the tier2 module's output jwks): the tier-1 API reads the holds tier 2 signs into visitors' identity cookies, so a visitor tier 2 holds keeps the tier-1 session however long the tier-2 wait (docs/invariants.md#27). null = tier 1 honours no hold."
  type        = string
  default     = null

  validation {
    condition     = var.tier2_jwks == null || can(jsondecode(var.tier2_jwks).keys)
    error_message = "tier2_jwks must be a JWKS document: {\"keys\": [...]}."
  }
}

variable "tier2_issuer" {
  description = "`iss` of tier 2's tokens (the tier2 module's entry_issuer output): the issuer of the holds tier 1 reads."
  type        = string
  default     = "vwr"
}
