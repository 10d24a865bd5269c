/** The channels sluice sends on. SMS and email never share a budget: rules are per channel. */
export const CHANNELS = ['sms', 'email', 'webhook'] as const;
export type Channel = (typeof CHANNELS)[number];
export const isChannel = (value: unknown): value is Channel => typeof value === 'string' && (CHANNELS as readonly string[]).includes(value);

/** One value per channel, built in {@link CHANNELS} order. */
export const perChannel = <T>(value: (channel: Channel) => T): Record<Channel, T> =>
  Object.fromEntries(CHANNELS.map((channel) => [channel, value(channel)])) as Record<Channel, T>;
