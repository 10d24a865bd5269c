import { SluiceError } from '../core/errors.js';
import type { RenderedTemplate } from './templates.js';

/**
 * The bytes (UTF-8) that the rendered texts of one batch may take together, shared by the
 * contexts of its messages: each message's render takes its share, and a message whose render
 * would take the batch past the bound is refused with 413 PAYLOAD_TOO_LARGE (the messages
 * rendered before it stand). A rendered text's own limit (CONTENT_LIMITS) bounds one render;
 * this bounds what a batch of up to 1,000 renders holds at once.
 */
export class RenderBudget {
  private taken = 0;

  constructor(readonly limitBytes: number) {}

  /** Takes the rendered texts' bytes, or throws PAYLOAD_TOO_LARGE leaving the budget as it was. */
  take(rendered: RenderedTemplate): void {
    let bytes = 0;
    for (const text of [rendered.subject, rendered.body, rendered.html]) if (text !== undefined) bytes += Buffer.byteLength(text, 'utf8');
    if (this.taken + bytes > this.limitBytes)
      throw new SluiceError(
        'PAYLOAD_TOO_LARGE',
        `the batch's rendered messages would pass ${this.limitBytes} bytes (SLUICE_BATCH_RENDER_LIMIT_BYTES): send this one in another batch`,
        { details: { limit: this.limitBytes } },
      );
    this.taken += bytes;
  }
}
