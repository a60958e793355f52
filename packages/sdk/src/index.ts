/**
 * @svc/sdk — typed client for merchants and theme builders.
 * The clients arrive with the SDK issue; until then the package exports the error
 * codes a client can meet so consumers can already switch on them.
 */
export { ERROR_CODES, type TErrorCode, type TErrorBody } from '@svc/schemas';
