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
  description = "Base URL of the CI runner that Quire registers its webhook with (RUNNER_URL). Empty to leave CI unregistered."
  type        = string
  default     = ""
}

variable "db_tier" {
  description = "Cloud SQL machine tier. It must allow the max_connections flag set in database.tf."
  type        = string
  default     = "db-custom-2-7680"
}

variable "db_max_connections" {
  description = "The max_connections flag of the PostgreSQL instance. The functions' pools times their max instances must stay under it (checked by test/fast/deploy/terraform.test.ts)."
  type        = number
  default     = 400
}

variable "deletion_protection" {
  description = "Protect the database instance and the buckets from `terraform destroy`."
  type        = bool
  default     = true
}
