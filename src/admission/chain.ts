/**
 * The admission chain (DESIGN.md §4): an ordered list of interceptors that each may reject a send
 * with a stable error code. A step that consumes something (quota, a frequency slot) returns an
 * undo; when a later step rejects or persisting fails, the undos run in reverse order, so a rejected
 * or failed request consumes nothing. The chain knows nothing of HTTP: the route, the CLI and the
 * tests drive the same chain.
 */
import { SluiceError } from '../core/errors.js';
import { ATTR, inSpan } from '../core/tracing.js';
import type { AdmissionContext } from './context.js';

/** Takes back what a step consumed. Must not throw for "already gone". */
export type Undo = () => Promise<void>;

export interface Interceptor {
  /** Stable name, used in metrics (`sluice_admission_rejections_total{interceptor}`) and logs. */
  readonly name: string;
  /**
   * Check (and maybe consume). Reject by throwing a SluiceError; return an Undo when something was
   * consumed; set `context.outcome` to end the chain early with an answer (an idempotent replay).
   */
  run(context: AdmissionContext): Promise<Undo | undefined> | Undo | undefined;
  /**
   * Runs once the chain has ended (admitted, answered early or rejected), for every step whose
   * `run` was called, in reverse order, after the undos: to let go of what the step holds for the
   * request's lifetime (an Idempotency-Key). Must not throw.
   */
  settle?(context: AdmissionContext): Promise<void> | void;
}

export interface ChainObserver {
  /** A step rejected the request (with a SluiceError code, or INTERNAL/UNAVAILABLE for a failure). */
  rejected?(interceptor: string, code: string): void;
  /** An undo failed: the request consumed something it should not have. Logged, never thrown. */
  undoFailed?(interceptor: string, error: unknown): void;
}

export class AdmissionChain {
  constructor(
    readonly interceptors: readonly Interceptor[],
    private readonly observer: ChainObserver = {},
  ) {
    const names = new Set<string>();
    for (const interceptor of interceptors) {
      if (names.has(interceptor.name)) throw new Error(`duplicate interceptor ${interceptor.name}`);
      names.add(interceptor.name);
    }
  }

  /** A new chain with `interceptor` inserted before the step named `before`: adding a check never edits the others. */
  with(interceptor: Interceptor, before: string): AdmissionChain {
    const index = this.interceptors.findIndex((step) => step.name === before);
    if (index < 0) throw new Error(`no interceptor named ${before}`);
    return new AdmissionChain([...this.interceptors.slice(0, index), interceptor, ...this.interceptors.slice(index)], this.observer);
  }

  /**
   * Runs every step; resolves when the request is admitted (or answered early), rejects with the
   * reason. Traced as `admit`, with a child span per step while the trace records.
   */
  admit(context: AdmissionContext): Promise<void> {
    return inSpan('admit', { attributes: { [ATTR.messageId]: context.id } }, async (span) => {
      await this.runSteps(context, span.isRecording());
      if (span.isRecording() && context.tenant) span.setAttribute(ATTR.tenant, context.tenant.id);
    });
  }

  private step(interceptor: Interceptor, context: AdmissionContext): Promise<Undo | undefined> {
    return inSpan(interceptor.name, { attributes: { [ATTR.step]: interceptor.name } }, async () => interceptor.run(context));
  }

  private async runSteps(context: AdmissionContext, traced: boolean): Promise<void> {
    const undos: { name: string; undo: Undo }[] = [];
    let ran = 0;
    let current = '';
    try {
      for (const interceptor of this.interceptors) {
        current = interceptor.name;
        ran++;
        const undo = await (traced ? this.step(interceptor, context) : interceptor.run(context));
        if (undo) undos.push({ name: interceptor.name, undo });
        if (context.outcome) break;
      }
    } catch (error) {
      this.observer.rejected?.(current, error instanceof SluiceError ? error.code : 'INTERNAL');
      await this.undoAll(undos);
      await this.settle(context, ran);
      throw error;
    }
    // A replay answers with the message accepted earlier: whatever this attempt consumed goes back.
    if (context.outcome?.replayed) await this.undoAll(undos);
    await this.settle(context, ran);
  }

  private async settle(context: AdmissionContext, ran: number): Promise<void> {
    for (let index = ran - 1; index >= 0; index--) await this.interceptors[index]!.settle?.(context);
  }

  private async undoAll(undos: { name: string; undo: Undo }[]): Promise<void> {
    for (const { name, undo } of undos.reverse()) {
      try {
        await undo();
      } catch (undoError) {
        this.observer.undoFailed?.(name, undoError);
      }
    }
  }
}
