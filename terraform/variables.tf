variable "project_id" {
  description = "The Google Cloud project Quire is deployed to."
  type        = string
}

variable "region" {
  description = "The region of the functions, the SSE service, Cloud SQL, the queue and the buckets (for example europe-west1)."
  type        = string
  default     = "europe-west1"
}

variable "domain" {
  description = "The DNS name clients use (for example quire.example.com). Point its A record at the `lb_ip_address` output; the managed certificate is issued for it."
  type        = string
}

variable "build_dir" {
  description = "The folder `npm run build` writes: one subfolder per function, named by its entry point (functions/groups.ts cloudFunctions), each a plain-JavaScript bundle with its package.json."
  type        = string
  default     = "../dist/functions"
}

variable "container_image" {
  description = "The container image built from `npm run build`'s dist/container/ (container/Dockerfile): the SSE service (its CMD) and the migration job (`node migrate.js`). For example europe-west1-docker.pkg.dev/PROJECT/quire/quire:TAG."
  type        = string
}

variable "bootstrap_admin" {
  description = "The identity (email) that is a global admin from the first start (BOOTSTRAP_ADMIN)."
  type        = string
}

variable "global_admins" {
  description = "Further global admins, comma-separated (GLOBAL_ADMINS). Empty for none."
  type        = string
  default     = ""
}

variable "oidc_issuer" {
  description = "Issuer of the ID tokens people sign in with (OIDC_ISSUER), for example https://accounts.google.com."
  type        = string
  default     = "https://accounts.google.com"
}

variable "oidc_client_id" {
  description = "OAuth client id whose ID tokens Quire accepts (OIDC_CLIENT_ID)."
  type        = string
}

variable "runner_url" {
  description = "Base URL of the CI runner that Quire registers its webhook with (RUNNER_URL): it receives `<runner_url>/webhook`. Empty (the default): Quire's own CI scheduler, the `scheduler` function behind the load balancer (https://<domain>, whose /webhook the URL map routes to it)."
  type        = string
  default     = ""
}

variable "db_tier" {
  description = "Cloud SQL machine tier. It must allow the max_connections flag set in database.tf."
  type        = string
  default     = "db-custom-2-7680"
}

variable "db_max_connections" {
  description = "The max_connections flag of the PostgreSQL instance. Every connection the deployment can open must leave 15% of it free (docs/deploy.md, \"The connection budget\"; checked by test/fast/deploy/terraform.test.ts)."
  type        = number
  default     = 400
}

variable "deletion_protection" {
  description = "Protect the database instance and the buckets from `terraform destroy`."
  type        = bool
  default     = true
}

variable "db_ip_type" {
  description = "How the functions, the SSE service and the migration job reach Cloud SQL (SVC_CLOUD_SQL_IP_TYPE). PUBLIC: the instance has a public IP, reached only through the connector. PRIVATE: no public IP (for an org policy that forbids them); the instance gets an address in var.network through private service access, the functions reach it through a Serverless VPC Access connector and the Cloud Run service and job through Direct VPC egress (network.tf)."
  type        = string
  default     = "PUBLIC"
  validation {
    condition     = contains(["PUBLIC", "PRIVATE"], var.db_ip_type)
    error_message = "db_ip_type must be PUBLIC or PRIVATE."
  }
}

variable "network" {
  description = "The VPC network of the private path (db_ip_type = PRIVATE): its name in the project."
  type        = string
  default     = "default"
}

variable "subnetwork" {
  description = "The subnet of var.network in var.region that the SSE service and the migration job send their private traffic through (Direct VPC egress; db_ip_type = PRIVATE)."
  type        = string
  default     = "default"
}

variable "vpc_connector_cidr" {
  description = "An unused /28 range of var.network for the functions' Serverless VPC Access connector (db_ip_type = PRIVATE)."
  type        = string
  default     = "10.8.0.0/28"
}

variable "db_migrator_password_version" {
  description = "Change (increase) to give the migrator's built-in database user a new generated password, written to the user and to Secret Manager in the same apply (database.tf)."
  type        = number
  default     = 1
}

variable "function_settings" {
  description = "Per function (the keys of local.functions in main.tf): max instances, memory and request timeout in seconds. Every instance holds database connections: raising max_instances needs room in db_max_connections (docs/deploy.md, \"The connection budget\"). repos serves archives, which can take minutes."
  type = map(object({
    max_instances   = number
    memory          = string
    timeout_seconds = number
  }))
  default = {
    meta            = { max_instances = 2, memory = "256Mi", timeout_seconds = 60 }
    repos           = { max_instances = 10, memory = "2Gi", timeout_seconds = 600 }
    orgs            = { max_instances = 2, memory = "256Mi", timeout_seconds = 60 }
    subscriptions   = { max_instances = 2, memory = "256Mi", timeout_seconds = 60 }
    scheduler       = { max_instances = 3, memory = "256Mi", timeout_seconds = 60 }
    identity        = { max_instances = 2, memory = "256Mi", timeout_seconds = 60 }
    web             = { max_instances = 2, memory = "256Mi", timeout_seconds = 60 }
    webhookDelivery = { max_instances = 2, memory = "256Mi", timeout_seconds = 60 }
    ciCron          = { max_instances = 1, memory = "256Mi", timeout_seconds = 60 }
    ciReaper        = { max_instances = 1, memory = "256Mi", timeout_seconds = 60 }
    autoMerge       = { max_instances = 1, memory = "512Mi", timeout_seconds = 60 }
  }
}

variable "sse_settings" {
  description = "The SSE service (events.tf): max instances (each holds its pool and a LISTEN connection), memory, and request timeout in seconds (a stream's longest life; clients resume with Last-Event-ID)."
  type = object({
    max_instances   = number
    memory          = string
    timeout_seconds = number
  })
  default = { max_instances = 3, memory = "512Mi", timeout_seconds = 3600 }
}

variable "migrate_settings" {
  description = "The migration job (migrate.tf): memory and task timeout in seconds."
  type = object({
    memory          = string
    timeout_seconds = number
  })
  default = { memory = "512Mi", timeout_seconds = 600 }
}

variable "cli_client_id" {
  description = "The OAuth client `quire login` signs in with (SVC_CLI_CLIENT_ID): a desktop-app client of oidc_issuer, which allows any loopback redirect port. Served at GET /auth/cli and accepted as an ID token audience. Empty: CLI sign-in answers 404 and the CLI needs QUIRE_TOKEN (docs/cli.md)."
  type        = string
  default     = ""
}

variable "cli_client_secret" {
  description = "That client's secret (SVC_CLI_CLIENT_SECRET), where the provider requires one even of desktop clients (Google does). It is not a secret: GET /auth/cli hands it to every CLI, as a desktop app ships it to every user, so it is a plain variable, not a Secret Manager secret. Empty for none."
  type        = string
  default     = ""
}

variable "ci_k8s_api_url" {
  description = "The API server of the GKE cluster the CI workers run in (SVC_CI_K8S_API_URL), e.g. https://<cluster endpoint>. Set: the scheduler checks each claim with TokenReview (docs/ci-worker-identity.md). Empty: no Kubernetes; see ci_static_worker_token."
  type        = string
  default     = ""
}

variable "ci_k8s_ca_pem" {
  description = "PEM of the cluster's CA (masterAuth.clusterCaCertificate, base64-decoded). Stored as a Secret Manager secret version and mounted into the scheduler as SVC_CI_K8S_CA_FILE; it is public, so it may sit in the state. Empty: the system roots."
  type        = string
  default     = ""
}

variable "ci_k8s_namespace" {
  description = "The CI namespace of the worker pods, their Jobs and the ci-worker CronJob (SVC_CI_K8S_NAMESPACE; worker/deploy/)."
  type        = string
  default     = "ci"
}

variable "ci_k8s_audience" {
  description = "The audience of the workers' projected tokens (SVC_CI_K8S_AUDIENCE): the CronJob's serviceAccountToken audience must equal it."
  type        = string
  default     = "quire-ci"
}

variable "ci_k8s_project_id" {
  description = "The project of the GKE cluster, where the functions' service account gets roles/container.clusterViewer to reach its API server. Empty: project_id."
  type        = string
  default     = ""
}

variable "ci_static_worker_token" {
  description = "Without a cluster: mount the Secret Manager secret quire-ci-worker-token into the scheduler as SVC_CI_WORKER_TOKEN, the shared bearer token of every worker (at least 16 characters; add its value with gcloud, docs/deploy.md). Refused together with ci_k8s_api_url."
  type        = bool
  default     = false
}
