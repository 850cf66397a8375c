// A PATCH's `config` checked against the schema of the stored source's type (S3ConfigInput or
// WebConfig of wire/sources.ts): the body schema cannot pick it, as the type is not in the body.
import type { TSchema } from '@sinclair/typebox';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { SourceTypeName } from '../../../domain/sources.js';
import { S3ConfigInput, WebConfig } from '../../../wire/index.js';

const configValidators = new Map<SourceTypeName, ValidateFunction>(
  (
    [
      ['s3', S3ConfigInput],
      ['web', WebConfig],
    ] as Array<[SourceTypeName, TSchema]>
  ).map(([type, schema]) => [type, new Ajv({ allErrors: false, strict: false }).compile(schema)]),
);

/**
 * Checks a PATCH's `config` against the schema of the source's type; throws a validation error
 * that the error handler answers as any body validation error (400 with pointers under /config).
 */
export function checkSourceConfig(type: SourceTypeName, config: unknown): void {
  const validate = configValidators.get(type);
  if (validate === undefined || validate(config)) return;
  const validation = (validate.errors ?? []).map((issue: ErrorObject) => ({
    ...issue,
    instancePath: `/config${issue.instancePath}`,
  }));
  throw Object.assign(new Error('invalid config'), {
    validation,
    validationContext: 'body',
    statusCode: 400,
  });
}
