/// <reference types="vite/client" />

/** The theme's settings: set in .env (see .env.example), baked in by `vite build`. */
interface ImportMetaEnv {
  /** The svc service's public URL, e.g. https://svc.example */
  readonly VITE_SVC_URL?: string;
  /** The store's subdomain, e.g. acme */
  readonly VITE_STORE?: string;
  /** `test` for the store's test products (test mode); live otherwise */
  readonly VITE_SVC_MODE?: string;
  /** With `VITE_SVC_MODE=test`: a preview token of the store (`svc_preview_…`), which test products need */
  readonly VITE_SVC_PREVIEW_TOKEN?: string;
}

interface ImportMeta {
  readonly env: ImportMetaEnv;
}
