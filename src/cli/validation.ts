/**
 * The CLI's bodies checked by the API's own validator: Fastify's ajv with the API's settings
 * ({@link API_AJV_OPTIONS}) on the API's schemas, so a command refuses exactly what the admin API
 * answers with a 400. Messages name the field (`rules[1].limit: …`) in TypeBox's words.
 */
import type { TSchema } from '@sinclair/typebox';
import { DefaultErrorFunction, ValueErrorType } from '@sinclair/typebox/errors';
import Fastify, { type FastifySchemaCompiler, type FastifySchemaValidationError } from 'fastify';
import { SluiceError } from '../core/errors.js';
import { API_AJV_OPTIONS } from '../http/app.js';

type Validator = ReturnType<FastifySchemaCompiler<TSchema>>;

let compiler: Promise<FastifySchemaCompiler<TSchema>> | undefined;

/** Fastify's validator compiler as the API's app has it; Fastify makes it for the first route with a schema. */
async function apiCompiler(): Promise<FastifySchemaCompiler<TSchema>> {
  const app = Fastify({ ajv: API_AJV_OPTIONS });
  app.post('/', { schema: { body: {} } }, async () => null);
  await app.ready();
  const made = app.validatorCompiler;
  await app.close();
  if (!made) throw new Error('Fastify made no validator compiler');
  return made;
}

const validators = new WeakMap<TSchema, Validator>();

async function validatorOf(schema: TSchema): Promise<Validator> {
  let validate = validators.get(schema);
  if (!validate) {
    compiler ??= apiCompiler();
    validate = (await compiler)({ schema, method: 'POST', url: '/', httpPart: 'body' });
    validators.set(schema, validate);
  }
  return validate;
}

/**
 * `body` if the API would take it as the body (or query) of `schema`; else INVALID_REQUEST naming
 * the first field refused. The services behind both check references (tenant, channel rules) themselves.
 */
export async function checkBody<T>(schema: TSchema, body: T): Promise<T> {
  const validate = await validatorOf(schema);
  if (validate(body) === true) return body;
  const error = relevantError(validate.errors ?? []);
  if (!error) throw new SluiceError('INVALID_REQUEST', 'body: not valid');
  throw new SluiceError('INVALID_REQUEST', `${fieldOf(error)}: ${messageOf(schema, error)}`);
}

/**
 * ajv reports every branch of a union that failed, then the union. A branch of another type (null
 * for `qpsLimit: 0`) says nothing: the first other error is the one to show ("greater or equal to 1").
 */
function relevantError(errors: FastifySchemaValidationError[]): FastifySchemaValidationError | undefined {
  const unions = new Set(errors.filter((error) => error.keyword === 'anyOf').map((error) => error.instancePath));
  return errors.find((error) => error.keyword !== 'anyOf' && !(error.keyword === 'type' && unions.has(error.instancePath))) ?? errors[0];
}

const pointerSegment = (segment: string) => segment.replaceAll('~1', '/').replaceAll('~0', '~');

/** `/rules/1/limit` → `rules[1].limit`; a missing or unexpected property is named itself. */
function fieldOf(error: FastifySchemaValidationError): string {
  const property = error.params.missingProperty ?? error.params.additionalProperty;
  const pointer = typeof property === 'string' ? `${error.instancePath}/${property}` : error.instancePath;
  const field = pointer
    .split('/')
    .slice(1)
    .map(pointerSegment)
    .map((segment, index) => (/^\d+$/.test(segment) ? `[${segment}]` : index === 0 ? segment : `.${segment}`))
    .join('');
  return field || 'body';
}

/** The schema holding the keyword that failed: the error's `schemaPath` minus the keyword, walked from `root`. */
function schemaAt(root: TSchema, schemaPath: string): TSchema {
  let schema: unknown = root;
  for (const segment of schemaPath.split('/').slice(1, -1))
    schema = (schema as Record<string, unknown> | undefined)?.[pointerSegment(segment)];
  return (schema ?? {}) as TSchema;
}

const TYPE_ERRORS: Record<string, ValueErrorType> = {
  array: ValueErrorType.Array,
  boolean: ValueErrorType.Boolean,
  integer: ValueErrorType.Integer,
  null: ValueErrorType.Null,
  number: ValueErrorType.Number,
  object: ValueErrorType.Object,
  string: ValueErrorType.String,
};

/** ajv's keyword as the TypeBox error it is, for TypeBox's message; `integer` picks the integer wording of a bound. */
function errorType(keyword: string, schema: TSchema): ValueErrorType | undefined {
  const integer = schema.type === 'integer';
  switch (keyword) {
    case 'type':
      return TYPE_ERRORS[String(schema.type)];
    case 'minimum':
      return integer ? ValueErrorType.IntegerMinimum : ValueErrorType.NumberMinimum;
    case 'maximum':
      return integer ? ValueErrorType.IntegerMaximum : ValueErrorType.NumberMaximum;
    case 'minLength':
      return ValueErrorType.StringMinLength;
    case 'maxLength':
      return ValueErrorType.StringMaxLength;
    case 'pattern':
      return ValueErrorType.StringPattern;
    case 'format':
      return ValueErrorType.StringFormat;
    case 'minItems':
      return ValueErrorType.ArrayMinItems;
    case 'maxItems':
      return ValueErrorType.ArrayMaxItems;
    case 'minProperties':
      return ValueErrorType.ObjectMinProperties;
    case 'maxProperties':
      return ValueErrorType.ObjectMaxProperties;
    case 'required':
      return ValueErrorType.ObjectRequiredProperty;
    case 'additionalProperties':
      return ValueErrorType.ObjectAdditionalProperties;
    case 'const':
      return ValueErrorType.Literal;
    case 'anyOf':
      return ValueErrorType.Union;
    default:
      return undefined;
  }
}

function messageOf(root: TSchema, error: FastifySchemaValidationError): string {
  const schema = schemaAt(root, error.schemaPath);
  const allowed = error.params.allowedValues;
  const type = errorType(error.keyword, schema);
  const message =
    error.keyword === 'enum' && Array.isArray(allowed)
      ? `must be one of ${allowed.join(', ')}`
      : type === undefined
        ? (error.message ?? error.keyword)
        : DefaultErrorFunction({ errorType: type, path: error.instancePath, schema, value: undefined, errors: [] });
  // A record's key refused by `propertyNames`: say which key.
  const key = (error as { propertyName?: unknown }).propertyName;
  return typeof key === 'string' ? `key ${JSON.stringify(key)}: ${message}` : message;
}
