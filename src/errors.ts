// Domain errors: thrown by the store and the read logic, mapped to HTTP in one place (api/plugins/errors.ts).

/** The thing asked for does not exist (HTTP 404). */
export class NotFoundError extends Error {}

/** The request cannot be answered as asked: a value is malformed or parameters conflict (HTTP 400). */
export class InvalidRequestError extends Error {}

/**
 * A mistake of whoever runs the service, not a bug: a bad setting, a port in use, an unreadable input
 * file. The CLI prints its message as one line and exits 2, without a stack trace.
 */
export class OperatorError extends Error {}
