terraform {
  required_version = ">= 1.6"

  required_providers {
    aws = {
      source = "hashicorp/aws"
      # aws_cognito_user_pool's user_pool_tier (threat protection needs the Plus tier): 5.83.
      version = ">= 5.83, < 6.0"
    }
  }
}
