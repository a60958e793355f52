/// <reference types="vite/client" />

/** The theme's settings: set in .env (see .env.example), baked in by `vite build`. */
interface ImportMetaEnv {
  /** The svc service's public URL, e.g. https://svc.example */
  readonly VITE_SVC_URL?: string;
  /** The store's subdomain, e.g. acme */
  readonly VITE_STORE?: string;
  /** `test` for the store's test products (test mode); live otherwise */
  readonly VITE_SVC_MODE?: string;
}

interface ImportMeta {
  readonly env: ImportMetaEnv;
}
