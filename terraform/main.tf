# Quire on Google Cloud: one Cloud Function per endpoint group (functions/groups.ts), the SSE
# service on Cloud Run, Cloud SQL for PostgreSQL, and a global external Application Load Balancer
# in front. docs/deploy.md explains the pieces; docs/routing.md the URL map.

terraform {
  # Write-only arguments and ephemeral resources (the migrator's password, database.tf).
  required_version = ">= 1.11"
  # Exact versions: the ones terraform/schema/ and docs/deploy.md were checked against. The first
  # `terraform init` where the registry is reachable writes .terraform.lock.hcl (commit it).
  required_providers {
    google = {
      source  = "hashicorp/google"
      version = "6.34.0"
    }
    archive = {
      source  = "hashicorp/archive"
      version = "2.7.1"
    }
    random = {
      source  = "hashicorp/random"
      version = "3.7.2"
    }
  }
}

provider "google" {
  project = var.project_id
  region  = var.region
}

locals {
  # The deployment table of functions/groups.ts (cloudFunctions), one entry per function: the key
  # is the entry point. `public` functions sit behind the load balancer; the others are internal
  # (no route, internal ingress, invoked only by Cloud Tasks or Cloud Scheduler with OIDC tokens).
  # Their sizes (max instances, memory, timeout) are var.function_settings.
  functions = {
    meta            = { service = "quire-meta", public = true }
    repos           = { service = "quire-repos", public = true }
    orgs            = { service = "quire-orgs", public = true }
    subscriptions   = { service = "quire-subscriptions", public = true }
    scheduler       = { service = "quire-scheduler", public = true }
    identity        = { service = "quire-identity", public = true }
    web             = { service = "quire-web", public = true }
    webhookDelivery = { service = "quire-webhook-delivery", public = false }
    ciCron          = { service = "quire-ci-cron", public = false }
    ciReaper        = { service = "quire-ci-reaper", public = false }
    autoMerge       = { service = "quire-auto-merge", public = false }
  }
  public_functions = { for name, f in local.functions : name => f if f.public }
  # Requests one instance serves at once: 20, except where a request may hold a 32 MiB body, whose
  # worst case times this must fit the memory (docs/deploy.md, "Memory of the repos function").
  request_concurrency = { repos = 10 }

  # The connection budget (docs/deploy.md, "The connection budget"; test/fast/deploy/terraform.test.ts
  # computes it): every function instance holds one pool of `db_pool_size` (shared/db/pool.ts
  # createPool's default max); webhookDelivery's instances also the deliverers' pool
  # (shared/webhooks/delivery.ts); each SSE instance its pool and one LISTEN connection (the relay);
  # the migration job one connection at a time; and the server keeps slots for superusers and
  # Cloud SQL's own agents. The total must leave 15% of var.db_max_connections free.
  db_pool_size            = 10
  webhook_pool_size       = 8
  sse_listen_connections  = 1
  migrate_connections     = 1
  db_reserved_connections = 10

  # The address clients use: the API's base URL, and the job-token issuer (served by `identity`).
  public_url = "https://${var.domain}"

  required_apis = [
    "cloudfunctions.googleapis.com",
    "run.googleapis.com",
    "cloudbuild.googleapis.com",
    "artifactregistry.googleapis.com",
    "sqladmin.googleapis.com",
    "cloudkms.googleapis.com",
    "cloudtasks.googleapis.com",
    "cloudscheduler.googleapis.com",
    "pubsub.googleapis.com",
    "secretmanager.googleapis.com",
    "compute.googleapis.com",
    "iam.googleapis.com",
    # The private path to Cloud SQL (network.tf).
    "servicenetworking.googleapis.com",
    "vpcaccess.googleapis.com",
  ]
}

data "google_project" "this" {}

resource "google_project_service" "apis" {
  for_each           = toset(local.required_apis)
  service            = each.value
  disable_on_destroy = false
}
