# Quire on Google Cloud: one Cloud Function per endpoint group (functions/groups.ts), the SSE
# service on Cloud Run, Cloud SQL for PostgreSQL, and a global external Application Load Balancer
# in front. docs/deploy.md explains the pieces; docs/routing.md the URL map.

terraform {
  required_version = ">= 1.5"
  required_providers {
    google = {
      source  = "hashicorp/google"
      version = ">= 6.20, < 8.0"
    }
    archive = {
      source  = "hashicorp/archive"
      version = ">= 2.4"
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
  # Every instance holds one pool of `db_pool_size` connections, so the sum of max_instances times
  # the pool size (plus the events service's) must stay under the database's max_connections
  # (test/fast/deploy/terraform.test.ts checks it).
  functions = {
    meta            = { service = "quire-meta", public = true, max_instances = 2, memory = "256Mi" }
    repos           = { service = "quire-repos", public = true, max_instances = 12, memory = "2Gi" }
    orgs            = { service = "quire-orgs", public = true, max_instances = 3, memory = "256Mi" }
    subscriptions   = { service = "quire-subscriptions", public = true, max_instances = 2, memory = "256Mi" }
    scheduler       = { service = "quire-scheduler", public = true, max_instances = 4, memory = "256Mi" }
    identity        = { service = "quire-identity", public = true, max_instances = 2, memory = "256Mi" }
    web             = { service = "quire-web", public = true, max_instances = 2, memory = "256Mi" }
    webhookDelivery = { service = "quire-webhook-delivery", public = false, max_instances = 4, memory = "256Mi" }
    ciCron          = { service = "quire-ci-cron", public = false, max_instances = 1, memory = "256Mi" }
    ciReaper        = { service = "quire-ci-reaper", public = false, max_instances = 1, memory = "256Mi" }
  }
  public_functions = { for name, f in local.functions : name => f if f.public }
  # Requests one instance serves at once: 20, except where a request may hold a 32 MiB body, whose
  # worst case times this must fit the memory (docs/deploy.md, "Memory of the repos function").
  request_concurrency = { repos = 10 }

  # shared/db/pool.ts createPool's default `max`, which every instance uses (shared/context.ts).
  db_pool_size = 10
  # The SSE service (Cloud Run, events.tf).
  events_max_instances = 5

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
  ]
}

data "google_project" "this" {}

resource "google_project_service" "apis" {
  for_each           = toset(local.required_apis)
  service            = each.value
  disable_on_destroy = false
}
