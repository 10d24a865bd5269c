/** What a result was measured on: numbers mean little without it. */
import { availableParallelism, cpus, platform, release, totalmem } from 'node:os';

export interface MachineInfo {
  cpuModel: string;
  cores: number;
  node: string;
  os: string;
  memoryGiB: number;
}

export function machineInfo(): MachineInfo {
  return {
    cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
    cores: availableParallelism(),
    node: process.version,
    os: `${platform()} ${release()}`,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
  };
}

export function describeMachine(info: MachineInfo): string {
  return `${info.cpuModel}, ${info.cores} cores, ${info.memoryGiB} GiB, ${info.os}, Node ${info.node}`;
}

/** A value of `INFO <section>` (`field:value` lines), or undefined. */
export function infoField(info: string, field: string): string | undefined {
  const match = new RegExp(`^${field}:(.*)$`, 'm').exec(info);
  return match?.[1]?.trim();
}
