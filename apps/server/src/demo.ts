/** The demo store `svc seed-demo` makes, and that the home page links to when it exists. */
export const DEMO_SUBDOMAIN = 'demo';
export const DEMO_OWNER = 'demo@svc.test';
