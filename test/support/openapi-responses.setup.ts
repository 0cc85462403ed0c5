/**
 * Loaded into every test file (vitest.config.ts `setupFiles`): after a file's tests, every response
 * its e2e HTTP helper received must match /openapi.json (openapi-responses.ts). A file that made no
 * such call pays nothing: the checker (ajv) is loaded only when there is something to check.
 */
import { afterAll, expect } from 'vitest';
import { loggedResponses } from './response-log.js';

afterAll(async () => {
  if (loggedResponses().responses.length === 0) return;
  const { responsesNotMatchingOpenApi } = await import('./openapi-responses.js');
  expect(await responsesNotMatchingOpenApi(), 'responses that do not match /openapi.json').toEqual([]);
});
