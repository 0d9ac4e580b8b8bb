variable "name" {
  description = "Prefix of alarm, metric and dashboard names."
  type        = string
  default     = "vwr"
}

variable "alarm_actions" {
  description = "ARNs notified when an alarm fires or recovers (e.g. an SNS topic)."
  type        = list(string)
  default     = []
}

variable "tier1" {
  description = "Tier-1 module outputs: public_api_id, function_names {api, admin, advancer}, log_group_names {api, admin, advancer}."
  type = object({
    public_api_id   = string
    function_names  = map(string)
    log_group_names = map(string)
  })
}

variable "tier2" {
  description = "Tier-2 module outputs (null without tier 2): public_api_id, function_names {api, worker, authorizer}, log_group_names, notice_queue_name, notice_dlq_name, redis_cache_name."
  type = object({
    public_api_id     = string
    function_names    = map(string)
    log_group_names   = map(string)
    notice_queue_name = string
    notice_dlq_name   = string
    redis_cache_name  = string
  })
  default = null
}

variable "api_5xx_percent" {
  description = "Alarm when more than this percentage of API requests fail with 5xx (1-minute periods, 3 of 5)."
  type        = number
  default     = 1

  validation {
    condition     = var.api_5xx_percent > 0 && var.api_5xx_percent <= 100
    error_message = "api_5xx_percent must be in (0, 100]."
  }
}

variable "api_min_requests" {
  description = "Requests per minute below which the 5xx rate is not judged (a few failures of a handful of requests are noise)."
  type        = number
  default     = 20
}

variable "function_error_threshold" {
  description = "Errors per 5 minutes of a request-serving function that raise an alarm (scheduled functions alarm on any error)."
  type        = number
  default     = 5
}

variable "notice_failure_threshold" {
  description = "Failed admission-notice sends per 5 minutes (after retries are counted) that raise an alarm."
  type        = number
  default     = 10
}

variable "stall_alarm_event_ids" {
  description = "Events (tier-1 ids) that get a `line-stalled` alarm: waiting > 0 and nothing served for 5 minutes, or the advancer stuck on them. Add an event before its sale. (AdvancerStuck of any event also raises <name>-tier1-advancer-stuck.)"
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for e in var.stall_alarm_event_ids : can(regex("^[A-Za-z0-9_-]{1,64}$", e))])
    error_message = "stall_alarm_event_ids must be event ids: 1-64 characters of A-Z a-z 0-9 _ -."
  }
}

variable "origin_5xx" {
  description = "The health gate's example alarm <name>-origin-5xx on the origin's 5xx rate (null = none). source = \"cloudfront\": the distribution's 5xxErrorRate (every request through CloudFront, the site origin's included) — CloudFront publishes it in us-east-1 only and an alarm watches its own region's metrics, so only where this module runs in us-east-1; needs distribution_id. source = \"protected-api\": the protected-API gate's 5XXError share (the booking backend behind it), any region; needs api_name and api_stage (tier-2 outputs protected_api_name, protected_api_stage)."
  type = object({
    source          = string
    distribution_id = optional(string)
    api_name        = optional(string)
    api_stage       = optional(string)
  })
  default = null

  validation {
    condition     = var.origin_5xx == null || try(contains(["cloudfront", "protected-api"], var.origin_5xx.source), false)
    error_message = "origin_5xx.source must be \"cloudfront\" or \"protected-api\"."
  }
}

variable "origin_5xx_percent" {
  description = "The origin-5xx alarm fires when more than this percentage of requests fail with 5xx in 2 of 3 minutes."
  type        = number
  default     = 5

  validation {
    condition     = var.origin_5xx_percent > 0 && var.origin_5xx_percent <= 100
    error_message = "origin_5xx_percent must be in (0, 100]."
  }
}

variable "origin_5xx_min_requests" {
  description = "Requests per minute below which the origin's 5xx rate is not judged (a few failures of a handful of requests must not stop a sale)."
  type        = number
  default     = 20

  validation {
    condition     = var.origin_5xx_min_requests >= 0
    error_message = "origin_5xx_min_requests must be >= 0."
  }
}
