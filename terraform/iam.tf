# Service accounts and least-privilege grants:
# - functions: the identity of every function (database user, buckets, queue, topic, KMS signer);
# - events:    the SSE service (database user, the topic's relay and its own subscriptions);
# - invoker:   what Cloud Tasks and Cloud Scheduler sign their OIDC tokens as; the only caller
#              the internal functions accept;
# - migrate:   the migration job (Cloud SQL client, the migrator's password);
# - build:     what Cloud Build runs the functions' gen2 builds as.

resource "google_service_account" "functions" {
  account_id   = "quire-functions"
  display_name = "Quire functions"
}

resource "google_service_account" "events" {
  account_id   = "quire-events"
  display_name = "Quire SSE service"
}

resource "google_service_account" "migrate" {
  account_id   = "quire-migrate"
  display_name = "Quire migration job"
}

resource "google_service_account" "build" {
  account_id   = "quire-build"
  display_name = "Quire function builds"
}

resource "google_service_account" "invoker" {
  account_id   = "quire-invoker"
  display_name = "Quire Cloud Tasks and Cloud Scheduler invoker"
}

# Database: connect through Cloud SQL and log in as an IAM user.
resource "google_project_iam_member" "db" {
  for_each = {
    for pair in setproduct(["roles/cloudsql.client", "roles/cloudsql.instanceUser"], ["functions", "events"]) :
    "${pair[1]}-${pair[0]}" => { role = pair[0], account = pair[1] }
  }
  project = var.project_id
  role    = each.value.role
  member  = each.value.account == "functions" ? google_service_account.functions.member : google_service_account.events.member
}

resource "google_storage_bucket_iam_member" "blobs" {
  bucket = google_storage_bucket.blobs.name
  role   = "roles/storage.objectUser"
  member = google_service_account.functions.member
}

resource "google_storage_bucket_iam_member" "ci_logs" {
  bucket = google_storage_bucket.ci_logs.name
  role   = "roles/storage.objectUser"
  member = google_service_account.functions.member
}

# Job tokens: sign with the key, and read its public half for the JWKS.
resource "google_kms_crypto_key_iam_member" "jobs_signer" {
  crypto_key_id = google_kms_crypto_key.jobs.id
  role          = "roles/cloudkms.signerVerifier"
  member        = google_service_account.functions.member
}

resource "google_kms_crypto_key_iam_member" "jobs_viewer" {
  crypto_key_id = google_kms_crypto_key.jobs.id
  role          = "roles/cloudkms.publicKeyViewer"
  member        = google_service_account.functions.member
}

# Transparency-log checkpoints: sign with the key, and read its public half to publish it.
resource "google_kms_crypto_key_iam_member" "log_signer" {
  crypto_key_id = google_kms_crypto_key.log.id
  role          = "roles/cloudkms.signerVerifier"
  member        = google_service_account.functions.member
}

resource "google_kms_crypto_key_iam_member" "log_viewer" {
  crypto_key_id = google_kms_crypto_key.log.id
  role          = "roles/cloudkms.publicKeyViewer"
  member        = google_service_account.functions.member
}

# Repo secrets: the functions wrap and unwrap their data keys; nothing else may.
resource "google_kms_crypto_key_iam_member" "secrets_encrypter" {
  crypto_key_id = google_kms_crypto_key.secrets.id
  role          = "roles/cloudkms.cryptoKeyEncrypterDecrypter"
  member        = google_service_account.functions.member
}

# The SSE service verifies CI job tokens too (functions/sse/context.ts): the key's public half.
resource "google_kms_crypto_key_iam_member" "events_jobs_viewer" {
  crypto_key_id = google_kms_crypto_key.jobs.id
  role          = "roles/cloudkms.publicKeyViewer"
  member        = google_service_account.events.member
}

# Webhook delivery: enqueue tasks that carry the invoker's OIDC token (which needs actAs on it).
resource "google_cloud_tasks_queue_iam_member" "enqueuer" {
  name     = google_cloud_tasks_queue.webhooks.name
  location = var.region
  role     = "roles/cloudtasks.enqueuer"
  member   = google_service_account.functions.member
}

resource "google_service_account_iam_member" "functions_act_as_invoker" {
  service_account_id = google_service_account.invoker.name
  role               = "roles/iam.serviceAccountUser"
  member             = google_service_account.functions.member
}

resource "google_pubsub_topic_iam_member" "publisher" {
  topic  = google_pubsub_topic.events.name
  role   = "roles/pubsub.publisher"
  member = google_service_account.functions.member
}

# The SSE service relays the event log to the topic (its leader publishes) and each instance
# creates a subscription of its own at start and deletes it on SIGTERM (docs/deploy.md, "The event
# stream service"). Creating subscriptions is a project permission that, among the predefined
# roles, only roles/pubsub.editor carries; a custom role with pubsub.subscriptions.{create,delete,
# get,consume} and pubsub.topics.{attachSubscription,publish,get} would narrow it.
resource "google_project_iam_member" "events_pubsub" {
  project = var.project_id
  role    = "roles/pubsub.editor"
  member  = google_service_account.events.member
}

# Secrets: the functions read theirs; the SSE service uses none.
resource "google_secret_manager_secret_iam_member" "functions" {
  for_each  = local.common_secrets
  secret_id = each.value
  role      = "roles/secretmanager.secretAccessor"
  member    = google_service_account.functions.member
}

# The internal functions: only the invoker account may call them (no allUsers binding exists).
resource "google_cloud_run_service_iam_member" "internal_invoker" {
  for_each = { for name, f in local.functions : name => f if !f.public }
  location = var.region
  service  = google_cloudfunctions2_function.fn[each.key].service_config[0].service
  role     = "roles/run.invoker"
  member   = google_service_account.invoker.member
}

# The migration job logs in as the built-in migrator with its password (database.tf): it needs the
# connector's Admin API calls (cloudsql.client, not instanceUser) and that one secret.
resource "google_project_iam_member" "migrate_sql_client" {
  project = var.project_id
  role    = "roles/cloudsql.client"
  member  = google_service_account.migrate.member
}

resource "google_secret_manager_secret_iam_member" "migrate" {
  secret_id = google_secret_manager_secret.db_migrator_password.secret_id
  role      = "roles/secretmanager.secretAccessor"
  member    = google_service_account.migrate.member
}

# Gen2 builds (functions.tf build_config.service_account): write logs, push the image to Artifact
# Registry (gcf-artifacts), read the uploaded source. The operator who applies needs
# iam.serviceAccountUser on this account (an owner has it).
resource "google_project_iam_member" "build" {
  for_each = toset(["roles/logging.logWriter", "roles/artifactregistry.writer"])
  project  = var.project_id
  role     = each.value
  member   = google_service_account.build.member
}

resource "google_storage_bucket_iam_member" "build_sources" {
  bucket = google_storage_bucket.sources.name
  role   = "roles/storage.objectViewer"
  member = google_service_account.build.member
}

# The scheduler's worker-identity secrets (ci.tf): read by the functions' account.
resource "google_secret_manager_secret_iam_member" "ci_worker" {
  for_each = {
    worker_token = google_secret_manager_secret.ci_worker_token.secret_id
    k8s_ca       = google_secret_manager_secret.ci_k8s_ca.secret_id
  }
  secret_id = each.value
  role      = "roles/secretmanager.secretAccessor"
  member    = google_service_account.functions.member
}

# TokenReview: the scheduler calls the cluster's API server with the functions' account's Google
# access token. This role lets that identity reach the cluster; what it may do there is RBAC's
# (worker/deploy/scheduler-rbac.yaml: system:auth-delegator, and get on pods, jobs, cronjobs).
resource "google_project_iam_member" "ci_cluster_viewer" {
  count   = var.ci_k8s_api_url != "" ? 1 : 0
  project = var.ci_k8s_project_id != "" ? var.ci_k8s_project_id : var.project_id
  role    = "roles/container.clusterViewer"
  member  = google_service_account.functions.member
}
