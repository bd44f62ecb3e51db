# One gen2 Cloud Function per entry of functions/groups.ts cloudFunctions, each built from its own
# bundle (`npm run build`), zipped and uploaded to the sources bucket. The object name carries the
# archive's hash, so a new build redeploys only the functions whose bundle changed.

data "archive_file" "function" {
  for_each    = local.functions
  type        = "zip"
  source_dir  = "${var.build_dir}/${each.key}"
  output_path = "${path.module}/.build/${each.key}.zip"
}

resource "google_storage_bucket_object" "function_source" {
  for_each = local.functions
  name     = "functions/${each.key}-${data.archive_file.function[each.key].output_md5}.zip"
  bucket   = google_storage_bucket.sources.name
  source   = data.archive_file.function[each.key].output_path
}

locals {
  # A gen2 function's deterministic run.app URL, known before the function exists: the queue's
  # target and the scheduler jobs need it, and a function cannot reference itself.
  function_url = {
    for name, f in local.functions : name => "https://${f.service}-${data.google_project.this.number}.${var.region}.run.app"
  }

  # The configuration every function and the SSE service share (shared/config.ts reads each name;
  # test/fast/deploy/terraform.test.ts checks them against its schema). SVC_CLI_CLIENT_* serve
  # `quire login` (GET /auth/cli on `identity`), and every function accepts the CLI's ID tokens.
  # RUNNER_URL is where the CI webhook goes (ci.tf).
  common_env = {
    LOG_FORMAT                        = "json"
    GOOGLE_CLOUD_PROJECT              = var.project_id
    SVC_CLOUD_SQL_INSTANCE            = google_sql_database_instance.quire.connection_name
    SVC_CLOUD_SQL_IP_TYPE             = var.db_ip_type
    SVC_DB_IAM_USER                   = google_sql_user.functions.name
    SVC_DB_NAME                       = google_sql_database.quire.name
    SVC_INTERNAL_INVOKERS             = google_service_account.invoker.email
    BOOTSTRAP_ADMIN                   = var.bootstrap_admin
    GLOBAL_ADMINS                     = var.global_admins
    OIDC_ISSUER                       = var.oidc_issuer
    OIDC_CLIENT_ID                    = var.oidc_client_id
    SVC_CLI_CLIENT_ID                 = var.cli_client_id
    SVC_CLI_CLIENT_SECRET             = var.cli_client_secret
    SVC_PUBLIC_URL                    = local.public_url
    SVC_OIDC_ISSUER_URL               = local.public_url
    SVC_BLOB_STORE                    = "gcs"
    SVC_BLOB_BUCKET                   = google_storage_bucket.blobs.name
    SVC_CI_LOG_STORE                  = "gcs"
    SVC_CI_LOG_BUCKET                 = google_storage_bucket.ci_logs.name
    SVC_EVENT_FANOUT                  = "pubsub"
    SVC_PUBSUB_TOPIC                  = google_pubsub_topic.events.name
    SVC_WEBHOOK_DELIVERY              = "cloudtasks"
    SVC_WEBHOOK_TASKS_QUEUE           = google_cloud_tasks_queue.webhooks.id
    SVC_WEBHOOK_TASKS_TARGET_URL      = "${local.function_url["webhookDelivery"]}/webhook-delivery"
    SVC_WEBHOOK_TASKS_SERVICE_ACCOUNT = google_service_account.invoker.email
    SVC_JOB_SIGNER                    = "kms"
    SVC_JOB_KMS_KEY_VERSION           = "${google_kms_crypto_key.jobs.id}/cryptoKeyVersions/1"
    SVC_SECRETS_KMS_KEY               = google_kms_crypto_key.secrets.id
    SVC_LOG_KMS_KEY_VERSION           = "${google_kms_crypto_key.log.id}/cryptoKeyVersions/1"
    RUNNER_URL                        = local.runner_url
    # Cloud Scheduler drives the cron and the reaper (ci.tf); no timers in the instances.
    SVC_CI_TIMERS = "false"
    # The auto-merge subscription's tasks go straight to the autoMerge function (docs/auto-merge.md).
    SVC_AUTO_MERGE_TASKS_TARGET_URL = "${local.function_url["autoMerge"]}/auto-merge-delivery"
  }

  # The process's own settings, not Quire's configuration: V8's young generation capped at 1 MiB
  # per semi-space, 5 to 7 MiB less RSS per instance, and glibc's malloc kept to two arenas
  # (docs/benchmarks.md, "Where the memory goes"). `--optimize-for-size` is not among the flags
  # NODE_OPTIONS accepts.
  node_env = {
    NODE_OPTIONS     = "--max-semi-space-size=1"
    MALLOC_ARENA_MAX = "2"
  }

  # Secret Manager secrets, mounted as environment variables (storage.tf creates them).
  common_secrets = {
    SVC_CI_WEBHOOK_SECRET   = google_secret_manager_secret.ci_webhook.secret_id
    SVC_ARCHIVE_SIGNING_KEY = google_secret_manager_secret.archive_signing.secret_id
    OIDC_CLIENT_SECRET      = google_secret_manager_secret.oidc_client.secret_id
  }
}

resource "google_cloudfunctions2_function" "fn" {
  for_each    = local.functions
  name        = each.value.service
  location    = var.region
  description = "Quire ${each.key} (functions/groups.ts)"

  build_config {
    runtime     = "nodejs24"
    entry_point = each.key
    # A build identity of our own (iam.tf) instead of the project's default compute account.
    service_account = google_service_account.build.id
    source {
      storage_source {
        bucket = google_storage_bucket.sources.name
        object = google_storage_bucket_object.function_source[each.key].name
      }
    }
  }

  service_config {
    max_instance_count               = var.function_settings[each.key].max_instances
    min_instance_count               = 0
    available_memory                 = var.function_settings[each.key].memory
    timeout_seconds                  = var.function_settings[each.key].timeout_seconds
    max_instance_request_concurrency = lookup(local.request_concurrency, each.key, 20)
    available_cpu                    = "1"
    service_account_email            = google_service_account.functions.email
    # Public functions take traffic only through the load balancer; internal ones only from
    # inside Google Cloud (Cloud Tasks, Cloud Scheduler), and their IAM invoker check still applies.
    ingress_settings               = each.value.public ? "ALLOW_INTERNAL_AND_GCLB" : "ALLOW_INTERNAL_ONLY"
    all_traffic_on_latest_revision = true
    environment_variables          = local.function_env[each.key]
    # The private path to Cloud SQL (network.tf): only private ranges go through the connector.
    vpc_connector                 = local.private_db ? google_vpc_access_connector.functions[0].id : null
    vpc_connector_egress_settings = local.private_db ? "PRIVATE_RANGES_ONLY" : null

    dynamic "secret_environment_variables" {
      for_each = local.function_secrets[each.key]
      content {
        key        = secret_environment_variables.key
        project_id = var.project_id
        secret     = secret_environment_variables.value
        version    = "latest"
      }
    }

    # The cluster CA, a file in the scheduler only (SVC_CI_K8S_CA_FILE; ci.tf).
    dynamic "secret_volumes" {
      for_each = local.function_secret_files[each.key]
      content {
        mount_path = secret_volumes.value.mount_path
        project_id = var.project_id
        secret     = secret_volumes.value.secret
        versions {
          path    = secret_volumes.value.path
          version = "latest"
        }
      }
    }
  }

  lifecycle {
    precondition {
      condition     = !(var.ci_k8s_api_url != "" && var.ci_static_worker_token)
      error_message = "ci_static_worker_token is refused together with ci_k8s_api_url: workers prove who they are with TokenReview (docs/ci-worker-identity.md)."
    }
  }

  depends_on = [
    google_project_service.apis,
    google_secret_manager_secret_iam_member.functions,
    google_project_iam_member.build,
    google_secret_manager_secret_iam_member.ci_worker,
    google_secret_manager_secret_version.ci_k8s_ca,
  ]
}

# The load balancer's serverless NEGs reach public functions as any caller: the functions do their
# own authentication (ID tokens, job tokens), so the public ones let allUsers invoke them. The
# internal functions get no such binding (iam.tf grants only the invoker service account).
resource "google_cloud_run_service_iam_member" "public_invoker" {
  for_each = local.public_functions
  location = var.region
  service  = google_cloudfunctions2_function.fn[each.key].service_config[0].service
  role     = "roles/run.invoker"
  member   = "allUsers"
}
