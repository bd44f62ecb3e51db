output "api_url" {
  description = "The API's base URL (through the load balancer)."
  value       = local.public_url
}

output "issuer_url" {
  description = "The job-token issuer (SVC_OIDC_ISSUER_URL): its discovery document is at /.well-known/openid-configuration."
  value       = local.public_url
}

output "lb_ip_address" {
  description = "The load balancer's global address: point the domain's A record here."
  value       = google_compute_global_address.api.address
}

output "database_connection_name" {
  description = "The Cloud SQL instance's connection name (PROJECT:REGION:INSTANCE)."
  value       = google_sql_database_instance.quire.connection_name
}

output "job_signing_key" {
  description = "The KMS key that signs job tokens."
  value       = google_kms_crypto_key.jobs.id
}

output "region" {
  description = "The region of the functions, the SSE service, the migration job and Cloud SQL (`--region` of gcloud)."
  value       = var.region
}

output "migration_job" {
  description = "The migration job: `gcloud run jobs execute <this> --region <region> --wait`."
  value       = google_cloud_run_v2_job.migrate.name
}

output "service_accounts" {
  description = "The service accounts' emails, by role."
  value = {
    functions = google_service_account.functions.email
    events    = google_service_account.events.email
    invoker   = google_service_account.invoker.email
    migrate   = google_service_account.migrate.email
    build     = google_service_account.build.email
  }
}

output "database_users" {
  description = "The database users: the functions' and the SSE service's IAM users, and the built-in migrator that owns the schema (its password is in the Secret Manager secret `database_migrator_password_secret`)."
  value = {
    functions = google_sql_user.functions.name
    events    = google_sql_user.events.name
    migrator  = google_sql_user.migrator.name
  }
}

output "database_migrator_password_secret" {
  description = "The Secret Manager secret that holds the migrator's password."
  value       = google_secret_manager_secret.db_migrator_password.secret_id
}

output "sse_service_url" {
  description = "The SSE service's own run.app URL (ingress: the load balancer only; for `gcloud run services describe`, logs)."
  value       = google_cloud_run_v2_service.events.uri
}

output "internal_function_urls" {
  description = "The internal functions' URLs (Cloud Tasks and Cloud Scheduler call them with the invoker's OIDC tokens)."
  value       = { for name, f in local.functions : name => local.function_url[name] if !f.public }
}

output "ci_worker" {
  description = "What the worker's Kubernetes manifests (worker/deploy/) need: the scheduler URL (SVC_CI_SCHEDULER_URL), the namespace and token audience, and the Google identity the RBAC of scheduler-rbac.yaml names as its User."
  value = {
    scheduler_url      = local.public_url
    namespace          = var.ci_k8s_namespace
    audience           = var.ci_k8s_audience
    scheduler_identity = google_service_account.functions.email
  }
}
