// Domain errors. The store's and the read logic's are mapped to HTTP in one place (api/plugins/errors.ts); an
// observer message's carry their status code, which the observer answers (ingest/observer-server.ts).

/** The thing asked for does not exist (HTTP 404). */
export class NotFoundError extends Error {}

/** The request cannot be answered as asked: a value is malformed or parameters conflict (HTTP 400). */
export class InvalidRequestError extends Error {}

/**
 * A mistake of whoever runs the service, not a bug: a bad setting, a port in use, an unreadable input
 * file. The CLI prints its message as one line and exits 2, without a stack trace.
 */
export class OperatorError extends Error {}

/** A message the node sent that cannot be applied as given: answered 400, nothing written. */
export class InvalidMessageError extends Error {
  readonly statusCode: number = 400;
}

/**
 * A well-formed message that conflicts with what the index holds: answered 409, nothing written. Only a
 * block whose parent was never received: it goes in once the missing messages are delivered (the node keeps
 * re-sending it). docs/observer.md says why a node that delivers every message never meets it.
 */
export class MessageConflictError extends InvalidMessageError {
  override readonly statusCode: number = 409;
}
