import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { ZodError } from 'zod';
import { describeError, StoreError, SuretyError, type SuretyErrorCode } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import { AdminError, type InputIssue } from '../admin-errors.js';
import { toIssues } from '../admin-schemas.js';

const STATUS: Partial<Record<SuretyErrorCode, ContentfulStatusCode>> = {
  SURETY_INVALID_INPUT: 400,
  SURETY_UNAUTHENTICATED: 401,
  SURETY_FORBIDDEN: 403,
  SURETY_NOT_FOUND: 404,
  SURETY_CONFLICT: 409,
  SURETY_PAYLOAD_TOO_LARGE: 413,
  SURETY_UNSUPPORTED_MEDIA_TYPE: 415,
  SURETY_STORE_FAILED: 503,
};

export interface ErrorBody {
  error: { code: SuretyErrorCode; message: string; issues?: InputIssue[] };
}

export function errorBody(code: SuretyErrorCode, message: string, issues?: readonly InputIssue[]): ErrorBody {
  return { error: { code, message, ...(issues?.length ? { issues: [...issues] } : {}) } };
}

/** Maps any thrown value to the API's error shape; only the generic message of unexpected errors reaches the client. */
export function errorResponse(c: Context, err: unknown, logger: Logger): Response {
  if (err instanceof AdminError) {
    if (err.code === 'SURETY_UNAUTHENTICATED') c.header('WWW-Authenticate', 'Bearer realm="surety"');
    return c.json(errorBody(err.code, err.message, err.issues), STATUS[err.code] ?? 400);
  }
  if (err instanceof HTTPException) {
    const status = err.status as ContentfulStatusCode;
    const code: SuretyErrorCode =
      status === 413 ? 'SURETY_PAYLOAD_TOO_LARGE' : status < 500 ? 'SURETY_INVALID_INPUT' : 'SURETY_INTERNAL_ERROR';
    return c.json(errorBody(code, err.message || 'bad request'), status);
  }
  if (err instanceof StoreError) {
    logger.error({ path: c.req.path, err: describeError(err) }, 'admin request: store failed');
    return c.json(errorBody('SURETY_STORE_FAILED', 'the database did not answer; try again'), 503);
  }
  logger.error({ path: c.req.path, err: describeError(err) }, 'admin request failed');
  const code = err instanceof SuretyError ? err.code : 'SURETY_INTERNAL_ERROR';
  return c.json(errorBody(code, 'internal error; see the server log'), 500);
}

const WHERE: Record<string, string> = {
  query: 'query',
  param: 'path',
  json: 'body',
  header: 'header',
  cookie: 'cookie',
};

/** The OpenAPI validators' hook: a 400 naming every bad field, before any handler runs. */
export function validationHook(
  result: { success: true } | { success: false; error: ZodError; target: string },
  c: Context,
): Response | undefined {
  if (result.success) return undefined;
  const issues = toIssues(result.error, WHERE[result.target] ?? result.target);
  const first = issues[0]!;
  return c.json(errorBody('SURETY_INVALID_INPUT', `${first.path}: ${first.message}`, issues), 400);
}
