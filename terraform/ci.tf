# The CI scheduler's cloud side: the KMS key that signs job tokens, the webhook delivery queue, and
# the Cloud Scheduler jobs that call the internal functions with OIDC tokens.

resource "google_kms_key_ring" "quire" {
  name       = "quire"
  location   = var.region
  depends_on = [google_project_service.apis]
}

# Job tokens are RS256 JWTs signed by this key (SVC_JOB_SIGNER=kms); the issuer publishes its
# public half at /.well-known/jwks.json. The private half never leaves KMS.
resource "google_kms_crypto_key" "jobs" {
  name     = "job-tokens"
  key_ring = google_kms_key_ring.quire.id
  purpose  = "ASYMMETRIC_SIGN"

  version_template {
    algorithm = "RSA_SIGN_PKCS1_2048_SHA256"
  }

  lifecycle {
    prevent_destroy = true
  }
}

# One task per webhook delivery attempt (docs/events.md): the task calls webhookDelivery's
# /webhook-delivery with an OIDC token of the invoker account. Quire schedules its own retries, so
# the queue retries only what never reached the function.
resource "google_cloud_tasks_queue" "webhooks" {
  name     = "quire-webhooks"
  location = var.region

  rate_limits {
    max_dispatches_per_second = 50
    max_concurrent_dispatches = 40
  }

  retry_config {
    max_attempts = 5
    min_backoff  = "1s"
    max_backoff  = "60s"
  }

  depends_on = [google_project_service.apis]
}

locals {
  # Cloud Scheduler → internal function routes (functions/ci-timers/routes.ts,
  # functions/webhook-delivery/routes.ts).
  scheduler_jobs = {
    ci-cron       = { function = "ciCron", path = "/ci-cron", schedule = "* * * * *", description = "Queue the jobs of cron triggers that are due (docs/ci-scheduler.md)" }
    ci-reap       = { function = "ciReaper", path = "/ci-reap", schedule = "* * * * *", description = "Re-queue claimed jobs whose heartbeat is older than 2 minutes" }
    webhook-sweep = { function = "webhookDelivery", path = "/webhook-sweep", schedule = "* * * * *", description = "Create missing delivery tasks; delete delivered rows past retention" }
  }
}

resource "google_cloud_scheduler_job" "timers" {
  for_each         = local.scheduler_jobs
  name             = "quire-${each.key}"
  description      = each.value.description
  region           = var.region
  schedule         = each.value.schedule
  time_zone        = "Etc/UTC"
  attempt_deadline = "60s"

  http_target {
    http_method = "POST"
    uri         = "${local.function_url[each.value.function]}${each.value.path}"

    oidc_token {
      service_account_email = google_service_account.invoker.email
      audience              = local.function_url[each.value.function]
    }
  }

  depends_on = [google_project_service.apis]
}
