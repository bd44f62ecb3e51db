/** The authenticated caller of a request. */
export interface Actor {
  /** The identity: the ID token's `email` claim (or DEV_IDENTITY). */
  identity: string;
  /** BOOTSTRAP_ADMIN and GLOBAL_ADMINS act as admin on every org and repo. */
  globalAdmin: boolean;
}
