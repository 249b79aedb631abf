import { SuretyError, type SuretyErrorCode } from '../core/errors.js';

/** One problem with an input: `path` names the field (`query.limit`, `body.reason`). */
export interface InputIssue {
  readonly path: string;
  readonly message: string;
}

export type AdminErrorCode = Extract<
  SuretyErrorCode,
  | 'SURETY_INVALID_INPUT'
  | 'SURETY_UNAUTHENTICATED'
  | 'SURETY_FORBIDDEN'
  | 'SURETY_NOT_FOUND'
  | 'SURETY_CONFLICT'
  | 'SURETY_PAYLOAD_TOO_LARGE'
  | 'SURETY_UNSUPPORTED_MEDIA_TYPE'
>;

/** An operator request that cannot be served; the HTTP API maps `code` to its status. */
export class AdminError extends SuretyError {
  declare readonly code: AdminErrorCode;
  readonly issues: readonly InputIssue[];

  constructor(code: AdminErrorCode, message: string, options?: { issues?: readonly InputIssue[]; cause?: unknown }) {
    super(code, message, options);
    this.issues = options?.issues ?? [];
  }
}

/** Malformed input: a bad filter, an oversized page, a missing reason. Nothing was changed. */
export class InvalidInputError extends AdminError {
  constructor(issues: readonly InputIssue[]) {
    const first = issues[0];
    super('SURETY_INVALID_INPUT', first ? `${first.path ? `${first.path}: ` : ''}${first.message}` : 'invalid input', {
      issues,
    });
  }
}

/** The row, job or message does not exist. */
export class NotFoundError extends AdminError {
  constructor(message: string) {
    super('SURETY_NOT_FOUND', message);
  }
}

/** The row's state does not allow the action (e.g. replaying a row that is being replayed). */
export class ConflictError extends AdminError {
  constructor(message: string) {
    super('SURETY_CONFLICT', message);
  }
}

/** The actor's role does not allow the action, or the feature is disabled. */
export class ForbiddenError extends AdminError {
  constructor(message: string) {
    super('SURETY_FORBIDDEN', message);
  }
}

/** No credential, or one that is not valid. */
export class UnauthenticatedError extends AdminError {
  constructor(message = 'a valid bearer token or session cookie is required') {
    super('SURETY_UNAUTHENTICATED', message);
  }
}
