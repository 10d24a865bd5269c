/**
 * Undos sent and not yet landed, per subject: a deferred ban of the subject waits for them, so
 * that on one instance it never counts an admission whose check was already taken back.
 */
export class UndosInFlight {
  private readonly bySubject = new Map<string, Set<Promise<void>>>();

  /** Tracks `undo` until it settles (either way); returns it. */
  track<T>(subject: string, undo: Promise<T>): Promise<T> {
    let undos = this.bySubject.get(subject);
    if (!undos) {
      undos = new Set();
      this.bySubject.set(subject, undos);
    }
    const landed = undo.then(
      () => undefined,
      () => undefined,
    );
    undos.add(landed);
    void landed.then(() => {
      undos.delete(landed);
      if (undos.size === 0 && this.bySubject.get(subject) === undos) this.bySubject.delete(subject);
    });
    return undo;
  }

  /** Resolves when every undo of `subject` tracked so far has settled. */
  async landed(subject: string): Promise<void> {
    await Promise.all(this.bySubject.get(subject) ?? []);
  }
}
