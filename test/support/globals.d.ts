// Test code reads JSON bodies it is about to assert on; typing each as `any` keeps the
// assertions readable. Production code never sees this file.
export {};
declare global {
  interface Response {
    json(): Promise<any>;
  }
}
