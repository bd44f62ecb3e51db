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
  description = "The max_connections flag of the PostgreSQL instance. The functions' pools times their max instances must stay under it (checked by test/deploy/terraform.test.ts)."
  type        = number
  default     = 400
}

variable "deletion_protection" {
  description = "Protect the database instance and the buckets from `terraform destroy`."
  type        = bool
  default     = true
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
