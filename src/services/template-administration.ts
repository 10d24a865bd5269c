/** Operator actions on templates and quiet hours (admin API and CLI); each change invalidates the live config everywhere. */
import type { QuietHours } from '../admission/quiet-hours.js';
import { coversWholeDay, isTimeZone, TIME_OF_DAY } from '../admission/quiet-hours.js';
import { type StoredShapes, storedRow } from '../admission/stored-shapes.js';
import { checkTemplate, TEMPLATE_NAME, type TemplateSpec } from '../admission/templates.js';
import type { Channel } from '../core/channels.js';
import { SluiceError, unavailableUnlessSluiceError } from '../core/errors.js';
import type { QuietHoursRepository } from '../storage/repositories/quiet-hours.js';
import type { TemplatesRepository, TemplateVersion } from '../storage/repositories/templates.js';
import type { TenantsRepository } from '../storage/repositories/tenants.js';
import type { QuietHoursView, TemplateAdminService, TemplateVersionView } from './contracts.js';

export interface TemplateAdministrationDeps {
  tenants: Pick<TenantsRepository, 'get'>;
  templates: TemplatesRepository;
  quietHours: QuietHoursRepository;
  /** Drop the cached copies on every instance after a change. */
  invalidateTemplate(tenantId: string, channel: Channel, name: string): Promise<void>;
  invalidateQuietHours(tenantId: string, channel: Channel): Promise<void>;
  /** The check of stored template versions. */
  shapes: Pick<StoredShapes, 'template'>;
}

const view = (shapes: Pick<StoredShapes, 'template'>, version: TemplateVersion): TemplateVersionView => ({
  channel: version.channel,
  name: version.name,
  version: version.version,
  ...shapes.template.read(storedRow.template(version.tenantId, version.channel, version.name, version.version), version.spec),
  createdAt: new Date(version.createdAt).toISOString(),
  retiredAt: version.retiredAt === null ? null : new Date(version.retiredAt).toISOString(),
});

export class TemplateAdministration implements TemplateAdminService {
  constructor(private readonly deps: TemplateAdministrationDeps) {}

  private async tenant(tenantId: string): Promise<void> {
    if (!(await this.deps.tenants.get(tenantId).catch(unavailableUnlessSluiceError))) throw new SluiceError('NOT_FOUND', 'no such tenant');
  }

  async putTemplate(tenantId: string, channel: Channel, name: string, spec: TemplateSpec): Promise<TemplateVersionView> {
    if (!new RegExp(TEMPLATE_NAME).test(name))
      throw new SluiceError('INVALID_REQUEST', 'a template name is 1 to 128 letters, digits, `_`, `.` or `-`', {
        details: { field: 'name' },
      });
    checkTemplate(channel, spec);
    await this.tenant(tenantId);
    const stored = await this.deps.templates
      .put(tenantId, channel, name, spec as unknown as Record<string, unknown>)
      .catch(unavailableUnlessSluiceError);
    await this.deps.invalidateTemplate(tenantId, channel, name);
    return view(this.deps.shapes, stored);
  }

  async templateVersions(tenantId: string, channel: Channel, name: string): Promise<TemplateVersionView[]> {
    await this.tenant(tenantId);
    const versions = await this.deps.templates.versions(tenantId, channel, name).catch(unavailableUnlessSluiceError);
    if (versions.length === 0) throw new SluiceError('NOT_FOUND', `no ${channel} template named "${name}"`);
    return versions.map((version) => view(this.deps.shapes, version));
  }

  async listTemplates(tenantId: string, channel?: Channel): Promise<TemplateVersionView[]> {
    await this.tenant(tenantId);
    return (await this.deps.templates.listCurrent(tenantId, channel).catch(unavailableUnlessSluiceError)).map((version) =>
      view(this.deps.shapes, version),
    );
  }

  async retireTemplate(tenantId: string, channel: Channel, name: string): Promise<boolean> {
    await this.tenant(tenantId);
    const retired = await this.deps.templates.retire(tenantId, channel, name).catch(unavailableUnlessSluiceError);
    if (retired) await this.deps.invalidateTemplate(tenantId, channel, name);
    return retired;
  }

  async setQuietHours(tenantId: string, channel: Channel, quiet: QuietHours): Promise<QuietHoursView> {
    const invalid = (message: string, field: string) => new SluiceError('INVALID_REQUEST', message, { details: { field } });
    if (!isTimeZone(quiet.timeZone))
      throw invalid(`unknown time zone "${quiet.timeZone}": use an IANA name such as Asia/Shanghai`, 'timeZone');
    quiet.windows.forEach((window, index) => {
      if (!TIME_OF_DAY.test(window.from)) throw invalid('`from` is a local time HH:MM (00:00 to 23:59)', `windows.${index}.from`);
      if (!TIME_OF_DAY.test(window.to)) throw invalid('`to` is a local time HH:MM (00:00 to 23:59)', `windows.${index}.to`);
      if (window.from === window.to) throw invalid('a window from a time to the same time is empty', `windows.${index}`);
    });
    if (coversWholeDay(quiet.windows))
      throw invalid('the windows together cover the whole day: leave at least one minute of the local day to send in', 'windows');
    await this.tenant(tenantId);
    await this.deps.quietHours.set(tenantId, channel, quiet).catch(unavailableUnlessSluiceError);
    await this.deps.invalidateQuietHours(tenantId, channel);
    return { channel, timeZone: quiet.timeZone, windows: quiet.windows, applies: quiet.applies };
  }

  async getQuietHours(tenantId: string, channel: Channel): Promise<QuietHoursView | undefined> {
    await this.tenant(tenantId);
    const found = await this.deps.quietHours.get(tenantId, channel).catch(unavailableUnlessSluiceError);
    return found && { channel, timeZone: found.timeZone, windows: found.windows, applies: found.applies };
  }

  async removeQuietHours(tenantId: string, channel: Channel): Promise<boolean> {
    await this.tenant(tenantId);
    const removed = await this.deps.quietHours.remove(tenantId, channel).catch(unavailableUnlessSluiceError);
    if (removed) await this.deps.invalidateQuietHours(tenantId, channel);
    return removed;
  }
}
