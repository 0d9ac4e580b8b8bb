variable "name" {
  description = "Prefix of every resource name."
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

# --- network -----------------------------------------------------------------------------------

variable "vpc_id" {
  description = "VPC of Redis and the tier-2 API and worker functions."
  type        = string
}

variable "subnet_ids" {
  description = "Private subnets (2 or 3, in different Availability Zones) for Redis, the functions and the interface endpoints."
  type        = list(string)

  validation {
    condition     = length(var.subnet_ids) >= 2 && length(var.subnet_ids) <= 3
    error_message = "subnet_ids must list 2 or 3 subnets (ElastiCache Serverless needs 2-3 Availability Zones)."
  }
}

variable "route_table_ids" {
  description = "Route tables of the private subnets, for the DynamoDB gateway endpoint."
  type        = list(string)
  default     = []
}

variable "create_vpc_endpoints" {
  description = "Create the endpoints the functions need instead of a NAT: SQS and Secrets Manager (interface, private DNS) and DynamoDB (gateway). Set false when the VPC already has them or a NAT (then also set extra_https_egress_cidrs)."
  type        = bool
  default     = true
}

variable "extra_https_egress_cidrs" {
  description = "CIDR blocks the functions may reach on 443 besides the endpoints (e.g. [\"0.0.0.0/0\"] behind a NAT)."
  type        = list(string)
  default     = []
}

# --- tier 1 (identity from tier-1 tokens, automatic registration, admin API) ------------------

variable "tier1_link_keys" {
  description = "The derived tier-1 keys tier 2 reads callers' tier-1 tokens with (module tier1 output tier2_link_keys: the edge keys and the place-proof keys, never the master keys). Stored in this module's secret <name>/tier1-link (VWR_TIER1_LINK_SECRET_ID)."
  type        = string
  sensitive   = true
}

variable "tier1_table_name" {
  description = "Tier-1 DynamoDB table (module tier1 output table_name): events active in tier 1 are served by tier 2 without registration."
  type        = string
}

variable "tier1_table_arn" {
  description = "ARN of the tier-1 table."
  type        = string
}

variable "tier1_settings" {
  description = "Tier-1 token and cookie settings (module tier1 output settings)."
  type = object({
    token_issuer   = string
    token_audience = string
    cookie_prefix  = string
  })
}

variable "tier1_key_ids" {
  description = "Tier-1 key ids (restarts the functions when they change, like tier 1's)."
  type        = list(string)
  default     = ["k1"]
}

variable "admin_api_id" {
  description = "Admin HTTP API (module tier1 output admin_api_id); the tier-2 admin routes are added to it with AWS_IAM auth."
  type        = string
}

variable "admin_api_execution_arn" {
  description = "Execution ARN of the admin HTTP API (module tier1 output admin_api_execution_arn)."
  type        = string
}

variable "admin_principal_patterns" {
  description = "Optional allow-list of IAM principal ARN patterns for the tier-2 admin routes (VWR_ADMIN_PRINCIPALS, comma-joined; `*` matches any run of characters); give it the tier1 module's value. [] = any principal IAM lets through the admin API's AWS_IAM auth."
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

variable "origin_secret_arn" {
  description = "Secret holding the x-vwr-origin-secret value CloudFront sends (module tier1 output origin_secret_arn): the public tier-2 API refuses requests without it (VWR_ORIGIN_SECRET_ID)."
  type        = string
}

# --- entry tokens ---------------------------------------------------------------------------

variable "key_ids" {
  description = "Entry-token (ES256, P-256) key ids; a key is generated for each. The first signs; the others only verify. Rotate like tier 1 (append, apply, move first, apply, drop after the token lifetime)."
  type        = list(string)
  default     = ["k1"]

  validation {
    condition     = length(var.key_ids) >= 1 && length(var.key_ids) <= 10 && length(distinct(var.key_ids)) == length(var.key_ids) && alltrue([for k in var.key_ids : can(regex("^[A-Za-z0-9_-]{1,32}$", k))])
    error_message = "key_ids must hold 1-10 distinct ids of 1-32 characters of A-Z a-z 0-9 _ -."
  }
}

variable "entry_issuer" {
  description = "`iss` of entry tokens (VWR_ENTRY_ISSUER)."
  type        = string
  default     = "vwr"
}

variable "entry_audience" {
  description = "`aud` of entry tokens (VWR_ENTRY_AUDIENCE)."
  type        = string
  default     = "vwr-api"
}

# --- admission settings -----------------------------------------------------------------------

variable "active_ttl_seconds" {
  description = "Admission (session) length (VWR_ACTIVE_TTL_SECONDS); entry tokens within it live entry_token_ttl_seconds each."
  type        = number
  default     = 600

  validation {
    condition     = var.active_ttl_seconds >= 1 && var.active_ttl_seconds <= 86400
    error_message = "active_ttl_seconds must be between 1 and 86400."
  }
}

variable "entry_token_ttl_seconds" {
  description = "Lifetime of one entry token (VWR_ENTRY_TOKEN_TTL_SECONDS): short, refreshed by the status call while the admission (active_ttl_seconds) lasts. A user who leaves keeps their slot counted until their last token expires, so this bounds the refill delay too."
  type        = number
  default     = 30

  validation {
    condition     = var.entry_token_ttl_seconds >= 10 && var.entry_token_ttl_seconds <= 3600
    error_message = "entry_token_ttl_seconds must be between 10 and 3600."
  }
}

variable "active_heartbeat_timeout_seconds" {
  description = "An active user without a heartbeat for this long loses the slot (VWR_ACTIVE_HEARTBEAT_TIMEOUT_SECONDS)."
  type        = number
  default     = 60

  validation {
    condition     = var.active_heartbeat_timeout_seconds >= 1 && var.active_heartbeat_timeout_seconds <= 3600
    error_message = "active_heartbeat_timeout_seconds must be between 1 and 3600."
  }
}

variable "waiting_timeout_seconds" {
  description = "VWR_WAITING_TIMEOUT_SECONDS. 0 (the default): waiting users are not heard from while they wait (their pages read the line document, ADR 0026) and liveness is judged at the turn (collect_seconds). Above 60 (the longest poll hint): for pages that poll status, a waiting user without a poll for this long leaves the line."
  type        = number
  default     = 0

  validation {
    condition     = var.waiting_timeout_seconds == 0 || (var.waiting_timeout_seconds > 60 && var.waiting_timeout_seconds <= 86400)
    error_message = "waiting_timeout_seconds must be 0 (off) or greater than 60 and at most 86400."
  }
}

variable "collect_seconds" {
  description = "VWR_COLLECT_SECONDS: an admission nobody comes for frees its slot for the next in line this long after it was made (docs/invariants.md#26); below active_heartbeat_timeout_seconds."
  type        = number
  default     = 10

  validation {
    condition     = var.collect_seconds >= 2 && var.collect_seconds <= 3600
    error_message = "collect_seconds must be between 2 and 3600 (and below active_heartbeat_timeout_seconds)."
  }
}

variable "evicted_place_seconds" {
  description = "A visitor removed by a heartbeat timeout who checks in again within this gets their old place back, not the back of the line (VWR_EVICTED_PLACE_SECONDS, docs/invariants.md#23)."
  type        = number
  default     = 1800

  validation {
    condition     = var.evicted_place_seconds >= 60 && var.evicted_place_seconds <= 86400
    error_message = "evicted_place_seconds must be between 60 and 86400."
  }
}

variable "admit_batch" {
  description = "Admissions per event per worker step (VWR_ADMIT_BATCH)."
  type        = number
  default     = 500

  validation {
    condition     = var.admit_batch >= 1 && var.admit_batch <= 100000
    error_message = "admit_batch must be between 1 and 100000."
  }
}

variable "default_threshold" {
  description = "Concurrency threshold of events registered from tier 1 (VWR_DEFAULT_THRESHOLD); per event: `vwr admin threshold`."
  type        = number
  default     = 1000

  validation {
    condition     = var.default_threshold >= 1
    error_message = "default_threshold must be at least 1."
  }
}

# --- Redis -----------------------------------------------------------------------------------

variable "redis_engine" {
  description = "ElastiCache Serverless engine: valkey (cheaper minimum) or redis."
  type        = string
  default     = "valkey"

  validation {
    condition     = contains(["valkey", "redis"], var.redis_engine)
    error_message = "redis_engine must be valkey or redis."
  }
}

variable "redis_major_version" {
  description = "Major engine version (valkey: 7 or 8; redis: 7)."
  type        = string
  default     = "8"
}

variable "redis_max_data_gb" {
  description = "Upper bound of the cache's data storage in GB (a cost guard; the line of 1 million users takes well under 1 GB)."
  type        = number
  default     = 5

  validation {
    condition     = var.redis_max_data_gb >= 1 && var.redis_max_data_gb <= 5000
    error_message = "redis_max_data_gb must be between 1 and 5000."
  }
}

variable "redis_max_ecpu_per_second" {
  description = "Upper bound of ElastiCache Processing Units per second (a cost guard)."
  type        = number
  default     = 100000

  validation {
    condition     = var.redis_max_ecpu_per_second >= 1000 && var.redis_max_ecpu_per_second <= 15000000
    error_message = "redis_max_ecpu_per_second must be between 1000 and 15000000."
  }
}

variable "redis_access_string" {
  description = "ACL of the application user: all keys, all commands except the dangerous ones (KEYS, FLUSHALL, CONFIG, …)."
  type        = string
  default     = "on ~* &* +@all -@dangerous"
}

variable "redis_timeout_ms" {
  description = "Redis connect and response timeout (VWR_REDIS_TIMEOUT_MS)."
  type        = number
  default     = 1000
}

# --- notices ---------------------------------------------------------------------------------

variable "notice_retention_seconds" {
  description = "How long admission notices stay in the FIFO queue."
  type        = number
  default     = 345600
}

variable "notice_max_receive_count" {
  description = "Receives of a notice before it moves to the dead-letter queue."
  type        = number
  default     = 5
}

# --- functions and API -----------------------------------------------------------------------

variable "api_memory_mb" {
  description = "Memory of the tier-2 API function."
  type        = number
  default     = 256
}

variable "api_reserved_concurrency" {
  description = "Reserved concurrency of the tier-2 API function (-1 = unreserved); also bounds the Redis connections it opens."
  type        = number
  default     = -1
}

variable "api_throttle_rate" {
  description = "Steady-state requests per second of the tier-2 API stage (per route)."
  type        = number
  default     = 5000

  validation {
    condition     = var.api_throttle_rate > 0
    error_message = "api_throttle_rate must be positive (a stage without throttling is limited only by the account)."
  }
}

variable "api_throttle_burst" {
  description = "Burst of the tier-2 API stage (per route)."
  type        = number
  default     = 2000

  validation {
    condition     = var.api_throttle_burst > 0
    error_message = "api_throttle_burst must be positive."
  }
}

variable "protected_api_throttle_rate" {
  description = "Steady-state requests per second of the protected-API gate stage (every method), bounding what reaches protected_backend_url."
  type        = number
  default     = 5000

  validation {
    condition     = var.protected_api_throttle_rate > 0
    error_message = "protected_api_throttle_rate must be positive."
  }
}

variable "protected_api_throttle_burst" {
  description = "Burst of the protected-API gate stage."
  type        = number
  default     = 2000

  validation {
    condition     = var.protected_api_throttle_burst > 0
    error_message = "protected_api_throttle_burst must be positive."
  }
}

variable "protected_backend_url" {
  description = "Base URL (https://…) of the operator's booking API. When set, a REST API gate is created: /api/seats/{proxy+} and /api/reservations/{proxy+} go through the entry-token authorizer, then to this URL. null = no gate (attach output authorizer_function_arn to your own REST API)."
  type        = string
  default     = null

  validation {
    condition     = var.protected_backend_url == null || can(regex("^https://[^/]+(/.*)?$", var.protected_backend_url))
    error_message = "protected_backend_url must be an https:// URL."
  }
}

variable "kms_key_arn" {
  description = "Optional customer managed KMS key for Redis, the queues, the secret, logs and environment variables."
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
