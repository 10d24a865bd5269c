/** What a wing opened, closed last first: a failing close is told and the others still run. */
export class CloseStack {
  private readonly closers: (() => Promise<unknown> | unknown)[] = [];

  /** Adds `close`, to run before everything added earlier. */
  push(...closers: (() => Promise<unknown> | unknown)[]): void {
    this.closers.unshift(...closers.reverse());
  }

  async close(onError: (error: unknown) => void = () => undefined): Promise<void> {
    for (const close of this.closers.splice(0)) {
      try {
        await close();
      } catch (error) {
        onError(error);
      }
    }
  }
}
