/**
 * Stored templates and quiet hours as admission reads them, through the live cache (local →
 * Redis → SQL), keyed by `<tenant>:<channel>[:<name>]`. An admin change invalidates its key on
 * every instance, so a new version is used within a second and an accepted message keeps the
 * version it pinned.
 */
import type { Channel } from '../../core/channels.js';
import type { LiveCache } from '../../infra/live-cache.js';
import type { QuietHoursRepository } from '../../storage/repositories/quiet-hours.js';
import type { TemplatesRepository } from '../../storage/repositories/templates.js';
import type { QuietHoursLookup, TemplateLookup } from '../ports.js';
import type { QuietHours } from '../quiet-hours.js';
import { type StoredShapes, storedRow } from '../stored-shapes.js';
import type { StoredTemplate } from '../templates.js';

export const templateCacheKey = (tenantId: string, channel: Channel, name: string) => `${tenantId}:${channel}:${name}`;
export const quietHoursCacheKey = (tenantId: string, channel: Channel) => `${tenantId}:${channel}`;

/** The cache's loader: the current version of `<tenant>:<channel>:<name>` from SQL, checked (`shapes`). */
export async function loadTemplate(
  templates: TemplatesRepository,
  shapes: Pick<StoredShapes, 'template'>,
  key: string,
): Promise<StoredTemplate | undefined> {
  const [tenantId, channel, ...rest] = key.split(':');
  const found = await templates.current(tenantId!, channel as Channel, rest.join(':'));
  if (!found) return undefined;
  const spec = shapes.template.read(storedRow.template(found.tenantId, found.channel, found.name, found.version), found.spec);
  return { ...spec, name: found.name, version: found.version };
}

/** The cache's loader: the quiet hours of `<tenant>:<channel>` from SQL. */
export async function loadQuietHours(quietHours: QuietHoursRepository, key: string): Promise<QuietHours | undefined> {
  const [tenantId, channel] = key.split(':');
  const found = await quietHours.get(tenantId!, channel as Channel);
  return found && { timeZone: found.timeZone, windows: found.windows, applies: found.applies };
}

export class CachedTemplates implements TemplateLookup {
  constructor(private readonly cache: LiveCache<StoredTemplate>) {}

  current(tenantId: string, channel: Channel, name: string): Promise<StoredTemplate | undefined> {
    return this.cache.get(templateCacheKey(tenantId, channel, name));
  }

  /** After a PUT or DELETE: every instance drops its copy. */
  invalidate(tenantId: string, channel: Channel, name: string): Promise<void> {
    return this.cache.invalidate(templateCacheKey(tenantId, channel, name));
  }

  close(): Promise<void> {
    return this.cache.close();
  }
}

export class CachedQuietHours implements QuietHoursLookup {
  constructor(private readonly cache: LiveCache<QuietHours>) {}

  get(tenantId: string, channel: Channel): Promise<QuietHours | undefined> {
    return this.cache.get(quietHoursCacheKey(tenantId, channel));
  }

  invalidate(tenantId: string, channel: Channel): Promise<void> {
    return this.cache.invalidate(quietHoursCacheKey(tenantId, channel));
  }

  close(): Promise<void> {
    return this.cache.close();
  }
}
