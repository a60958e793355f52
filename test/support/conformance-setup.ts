/** vitest setup file: every answer of a started svc server under /api/ is checked against the document (conformance.ts). */
import { installConformanceCheck } from './conformance.js';

installConformanceCheck();
