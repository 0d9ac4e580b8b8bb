output "id" {
  description = "Id of the HTTP API."
  value       = aws_apigatewayv2_api.this.id
}

output "execution_arn" {
  description = "Execution ARN of the HTTP API (for Lambda permissions and operators' IAM policies)."
  value       = aws_apigatewayv2_api.this.execution_arn
}

output "name" {
  description = "Name of the HTTP API (its CloudWatch ApiName dimension)."
  value       = aws_apigatewayv2_api.this.name
}

output "endpoint" {
  description = "Base URL of the HTTP API (https://…)."
  value       = aws_apigatewayv2_api.this.api_endpoint
}

output "domain" {
  description = "Host name of the HTTP API, for a CloudFront origin."
  value       = replace(aws_apigatewayv2_api.this.api_endpoint, "https://", "")
}

output "stage_name" {
  description = "Name of the stage ($default, auto-deployed)."
  value       = aws_apigatewayv2_stage.this.name
}

output "route_keys" {
  description = "The API's routes given to this module: route name → route key (\"GET /api/admin/vwr/events\"), for another API that carries the same routes (the console's)."
  value       = module.routes.route_keys
}

output "authorizer_ids" {
  description = "Ids of the authorizers made on the API, by name (for routes put on it by module http_api/routes: its existing_authorizers)."
  value       = module.routes.authorizer_ids
}
