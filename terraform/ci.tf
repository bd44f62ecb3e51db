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

# The repos' transparency logs (docs/verifiable-history.md): checkpoints are C2SP signed notes,
# Ed25519 as the note format defines (SVC_LOG_KMS_KEY_VERSION); the public half is published at
# /.well-known/quire-log-key. Clients pin it: never destroy or replace it.
resource "google_kms_crypto_key" "log" {
  name     = "log-ed25519"
  key_ring = google_kms_key_ring.quire.id
  purpose  = "ASYMMETRIC_SIGN"

  version_template {
    algorithm = "EC_SIGN_ED25519"
  }

  lifecycle {
    prevent_destroy = true
  }
}

# Repo secrets for CI (docs/secrets.md): each value is sealed under a data key of its own, which
# this key wraps (SVC_SECRETS_KMS_KEY). Symmetric, rotated every 90 days: old versions still
# decrypt, new data keys are wrapped with the primary one. A database dump without this key
# opens nothing.
resource "google_kms_crypto_key" "secrets" {
  name            = "repo-secrets"
  key_ring        = google_kms_key_ring.quire.id
  purpose         = "ENCRYPT_DECRYPT"
  rotation_period = "7776000s"

  lifecycle {
    prevent_destroy = true
  }
}

# One task per webhook delivery attempt (docs/events.md): the task calls webhookDelivery's
# /webhook-delivery with an OIDC token of the invoker account, or, for the auto-merge subscription,
# autoMerge's /auto-merge-delivery (docs/auto-merge.md). Quire schedules its own retries, so the
# queue retries only what never reached the function.
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

# The scheduler's side of worker identity (docs/ci-worker-identity.md): POST /claim is served by
# `scheduler` only, so only it gets the Kubernetes settings, the cluster CA and the static token.
locals {
  # The scheduler's /webhook through the load balancer (lb.tf routes it to `scheduler`), unless
  # another runner is named.
  runner_url = var.runner_url != "" ? var.runner_url : local.public_url
  k8s_ca_dir = "/etc/quire-k8s"

  # Set only with a cluster; a CA file only with a CA (the configuration checks the file at start).
  ci_worker_env = {
    for k, v in {
      SVC_CI_K8S_API_URL   = var.ci_k8s_api_url
      SVC_CI_K8S_NAMESPACE = var.ci_k8s_namespace
      SVC_CI_K8S_AUDIENCE  = var.ci_k8s_audience
      SVC_CI_K8S_CA_FILE   = var.ci_k8s_ca_pem != "" ? "${local.k8s_ca_dir}/ca.pem" : ""
    } : k => v if var.ci_k8s_api_url != "" && v != ""
  }
  ci_worker_secrets = {
    for k, v in { SVC_CI_WORKER_TOKEN = google_secret_manager_secret.ci_worker_token.secret_id } :
    k => v if var.ci_static_worker_token
  }
  ci_worker_files = {
    for k, v in { ca = { mount_path = local.k8s_ca_dir, path = "ca.pem", secret = google_secret_manager_secret.ci_k8s_ca.secret_id } } :
    k => v if var.ci_k8s_api_url != "" && var.ci_k8s_ca_pem != ""
  }

  # Per function (main.tf's table): the shared settings, and the scheduler's own (for-expressions
  # rather than conditionals, so each side keeps its type).
  function_env = {
    for name, f in local.functions : name => merge(local.common_env, local.node_env, { for k, v in local.ci_worker_env : k => v if name == "scheduler" })
  }
  function_secrets = {
    for name, f in local.functions : name => merge(local.common_secrets, { for k, v in local.ci_worker_secrets : k => v if name == "scheduler" })
  }
  function_secret_files = {
    for name, f in local.functions : name => { for k, v in local.ci_worker_files : k => v if name == "scheduler" }
  }
}
