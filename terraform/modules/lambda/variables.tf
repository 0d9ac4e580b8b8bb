variable "function_name" {
  description = "Name of the Lambda function (also names its role and log group)."
  type        = string

  validation {
    condition     = can(regex("^[A-Za-z0-9_-]{1,64}$", var.function_name))
    error_message = "function_name must be 1-64 characters of A-Z a-z 0-9 _ -."
  }
}

variable "binary" {
  description = "Cargo binary name; the code is read from <dist_dir>/lambda/<binary>.zip (scripts/package.sh)."
  type        = string

  validation {
    condition     = can(regex("^vwr-[a-z0-9-]+$", var.binary))
    error_message = "binary must be one of the vwr Lambda binaries (vwr-…)."
  }
}

variable "dist_dir" {
  description = "Path of the dist/ directory written by scripts/package.sh."
  type        = string
}

variable "description" {
  description = "Function description."
  type        = string
  default     = ""
}

variable "architecture" {
  description = "Instruction set the zip was built for: x86_64 or arm64 (see dist/manifest.json)."
  type        = string
  default     = "x86_64"

  validation {
    condition     = contains(["x86_64", "arm64"], var.architecture)
    error_message = "architecture must be x86_64 or arm64."
  }
}

variable "memory_mb" {
  description = "Memory in MB (Rust Lambdas need little: 128-256)."
  type        = number
  default     = 128

  validation {
    condition     = var.memory_mb >= 128 && var.memory_mb <= 10240
    error_message = "memory_mb must be between 128 and 10240."
  }
}

variable "timeout_seconds" {
  description = "Function timeout in seconds."
  type        = number
  default     = 10

  validation {
    condition     = var.timeout_seconds >= 1 && var.timeout_seconds <= 900
    error_message = "timeout_seconds must be between 1 and 900."
  }
}

variable "reserved_concurrency" {
  description = "Reserved concurrent executions: a cap that also guarantees capacity; -1 = unreserved."
  type        = number
  default     = -1

  validation {
    condition     = var.reserved_concurrency >= -1
    error_message = "reserved_concurrency must be -1 (unreserved) or >= 0."
  }
}

variable "environment" {
  description = "Environment variables; entries whose value is null are left out."
  type        = map(string)
  default     = {}
}

variable "policy_json" {
  description = "IAM policy document (JSON) with exactly what the code calls; logging to its own log group is added here."
  type        = string
}

variable "vpc_subnet_ids" {
  description = "Private subnets to run in; empty = no VPC."
  type        = list(string)
  default     = []
}

variable "vpc_security_group_ids" {
  description = "Security groups of the function when it runs in a VPC."
  type        = list(string)
  default     = []
}

variable "log_retention_days" {
  description = "CloudWatch Logs retention of the function's log group."
  type        = number
  default     = 30

  validation {
    condition     = contains([1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653], var.log_retention_days)
    error_message = "log_retention_days must be a value CloudWatch Logs accepts (1, 3, 5, 7, 14, 30, 60, 90, …)."
  }
}

variable "kms_key_arn" {
  description = "Optional customer managed KMS key for environment variables and logs (null = AWS managed)."
  type        = string
  default     = null
}

variable "tags" {
  description = "Tags for every resource."
  type        = map(string)
  default     = {}
}

variable "every_minute" {
  description = "Invoke the function every minute with EventBridge Scheduler (the advancer and the worker tick inside each run); a late or failed run is never retried, the next one is a minute away."
  type        = bool
  default     = false
}
