/** Starts lock-child.ts processes and collects their JSON events (see lock-child.ts). */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

export interface LockChildEvent {
  event: 'ready' | 'acquired' | 'work' | 'lost' | 'released';
  t?: number;
  seq?: number;
  heldInListener?: boolean;
}

const childPath = fileURLToPath(new URL('./lock-child.ts', import.meta.url));
const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

export class Contender {
  readonly events: LockChildEvent[] = [];
  private readonly process: ChildProcess;
  private stderr = '';
  private waiters: (() => void)[] = [];

  constructor(
    readonly label: string,
    redisUrl: string,
    lockName: string,
    leaseMs: number,
  ) {
    this.process = spawn(process.execPath, ['--import', 'tsx', childPath, redisUrl, lockName, String(leaseMs)], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let buffered = '';
    this.process.stdout?.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) if (line.trim() !== '') this.events.push(JSON.parse(line) as LockChildEvent);
      for (const wake of this.waiters.splice(0)) wake();
    });
    this.process.stderr?.on('data', (chunk: Buffer) => {
      this.stderr += chunk.toString();
    });
    this.process.on('exit', () => {
      for (const wake of this.waiters.splice(0)) wake();
    });
  }

  of(kind: LockChildEvent['event']): LockChildEvent[] {
    return this.events.filter((e) => e.event === kind);
  }

  /** Resolves with the first event (in arrival order, from index `from`) that matches; rejects after `timeoutMs`. */
  async waitFor(predicate: (e: LockChildEvent) => boolean, timeoutMs: number, from = 0): Promise<LockChildEvent> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.events.slice(from).find(predicate);
      if (found !== undefined) return found;
      const left = deadline - Date.now();
      if (left <= 0 || this.process.exitCode !== null) {
        throw new Error(
          `${this.label}: no matching event in ${timeoutMs} ms; events ${JSON.stringify(this.events)}; stderr ${this.stderr}`,
        );
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  signal(signal: NodeJS.Signals): void {
    this.process.kill(signal);
  }

  /** SIGTERM (the child releases and exits), SIGKILL after 5 s; resolves once it is gone. */
  async stop(): Promise<void> {
    if (this.process.exitCode !== null || this.process.signalCode !== null) return;
    const exited = once(this.process, 'exit');
    this.process.kill('SIGCONT');
    this.process.kill('SIGTERM');
    const timer = setTimeout(() => this.process.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  }
}
