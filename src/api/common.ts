/**
 * What every part of the wire shares: enums built from their lists, the parameters most routes
 * take, and {@link viewOf}, which holds a view's schema to the type the service answers.
 */
import { type Static, type StringOptions, type TSchema, type TUnsafe, Type } from '@sinclair/typebox';
import { CHANNELS, perChannel } from '../core/channels.js';
import { EVENT_STATUSES, EVENT_TYPES, MESSAGE_STATUSES, TENANT_STATUSES } from '../core/lifecycle.js';

/**
 * A string among `values`: JSON Schema's `{type: 'string', enum}` (as `Type.String` writes it, so
 * TypeBox's `Value` checks it as a string and ajv checks the enum), typed as the union of `values`.
 */
export const stringEnum = <const T extends string>(values: readonly T[], options: StringOptions = {}): TUnsafe<T> =>
  Type.Unsafe<T>(Type.String({ enum: [...values], ...options }));

/** An object with one property per channel, each of `schema`. */
export const perChannelObject = <T extends TSchema>(schema: T, options: { additionalProperties?: boolean } = {}) =>
  Type.Object(
    perChannel(() => schema),
    options,
  );

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** A time in a view: ISO 8601. */
export const Iso = Type.String({ format: 'date-time' });

/** Deep structural form of a type (intersections flattened), for {@link Same}. */
type Normal<T> = T extends readonly (infer U)[] ? Normal<U>[] : T extends object ? { [K in keyof T]: Normal<T[K]> } : T;

/** Whether A and B are the same type: same fields, each as optional and as nullable on both sides. */
type Same<A, B> = (<X>() => X extends Normal<A> ? 1 : 2) extends <X>() => X extends Normal<B> ? 1 : 2 ? true : false;

/**
 * `schema`, once the compiler has held its `Static` type to `T`, the type the service answers
 * (`services/views.ts`): a field on one side only, or optional or nullable on one side only, does
 * not compile ("Expected 2 arguments", the mismatch naming both types). One shape, declared where
 * the service is and described here, cannot drift.
 */
export const viewOf =
  <T>() =>
  <S extends TSchema>(schema: S, ..._same: Same<Static<S>, T> extends true ? [] : [mismatch: { schema: Static<S>; service: T }]): S =>
    schema;

export const ChannelName = stringEnum(CHANNELS);
/** A channel, or `*`: every channel (blacklists). */
export const CHANNEL_OR_ANY = [...CHANNELS, '*'] as const;
export const ChannelOrAny = stringEnum(CHANNEL_OR_ANY);
export const TenantStatusName = stringEnum(TENANT_STATUSES);
export const MessageStatusName = stringEnum(MESSAGE_STATUSES);
export const EventTypeName = stringEnum(EVENT_TYPES);
export const EventStatusName = stringEnum(EVENT_STATUSES);

/** TypeBox turns a record's key schema into a pattern and drops its length: `propertyNames` keeps it. */
export const KEY = { propertyNames: { maxLength: 64 } };

/** Stored free text: no control characters (PostgreSQL refuses NUL outright, and none belongs in a name or a note). */
export const PLAIN_TEXT = '^[^\\u0000-\\u001f\\u007f]*$';

export const IdParam = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

export const ChannelParam = Type.Object({
  id: Type.String({ maxLength: 64 }),
  channel: ChannelName,
});

/** A route that takes no query parameter refuses one, as a route with a querystring schema refuses one it does not know. */
export const NoQuery = Type.Object({}, { additionalProperties: false });
