output "throttles" {
  description = "The routes' own throttles, route key → {rate, burst} (for the stage's route settings; routes without one are left out). Known once the routes exist."
  value       = { for k, r in var.routes : aws_apigatewayv2_route.this[k].route_key => r.throttle if r.throttle != null }
}

output "route_keys" {
  description = "The routes given to this module: route name → route key (known at plan time)."
  value       = { for k, r in var.routes : k => r.route_key }
}

output "authorizer_ids" {
  description = "Ids of the authorizers this module made (var.authorizers), by name."
  value       = { for k, a in aws_apigatewayv2_authorizer.this : k => a.id }
}
