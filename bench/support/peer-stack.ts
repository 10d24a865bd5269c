/**
 * The stack a user would build instead of sluice, for the service benchmark: Fastify with a JSON
 * schema, libphonenumber-js to normalise the number, rate-limiter-flexible's RateLimiterUnion of
 * three RateLimiterRedis (the seed rules: 1 min 3, 1 h 10, 1 day 50 per recipient) and a BullMQ
 * `queue.add` (or `addBulk` for a batch) on the same Redis. No durable SQL store: BullMQ's Redis
 * is its queue.
 */
import { Queue } from 'bullmq';
import Fastify from 'fastify';
import { Redis } from 'ioredis';
import { parsePhoneNumberFromString } from 'libphonenumber-js';
import { RateLimiterRedis, RateLimiterUnion } from 'rate-limiter-flexible';

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const client = new Redis(redisUrl, { enableOfflineQueue: true });
const limiter = new RateLimiterUnion(
  new RateLimiterRedis({ storeClient: client, keyPrefix: 'peer:1m', points: 3, duration: 60 }),
  new RateLimiterRedis({ storeClient: client, keyPrefix: 'peer:1h', points: 10, duration: 3600 }),
  new RateLimiterRedis({ storeClient: client, keyPrefix: 'peer:1d', points: 50, duration: 86_400 }),
);
const queue = new Queue('messages', { connection: new Redis(redisUrl, { maxRetriesPerRequest: null }) });

const message = {
  type: 'object',
  required: ['channel', 'to'],
  additionalProperties: false,
  properties: {
    channel: { enum: ['sms', 'email', 'webhook'] },
    to: { type: 'string', minLength: 1, maxLength: 320 },
    body: { type: 'string', maxLength: 32_768 },
    template: { type: 'string', maxLength: 128 },
    params: { type: 'object' },
  },
} as const;

type Message = { channel: string; to: string; body?: string };

/** Normalised and admitted by the three rules: the job to queue, or the refusal. */
async function admit(body: Message): Promise<{ to: string } | { error: string }> {
  const phone = parsePhoneNumberFromString(body.to, 'CN');
  if (!phone?.isValid()) return { error: 'INVALID_REQUEST' };
  try {
    await limiter.consume(phone.number);
    return { to: phone.number };
  } catch {
    return { error: 'RATE_LIMITED' };
  }
}

const app = Fastify({ logger: false, bodyLimit: 4 * 1024 * 1024 });
app.post('/v1/messages', { schema: { body: message } }, async (request, reply) => {
  const body = request.body as Message;
  const admitted = await admit(body);
  if ('error' in admitted) return reply.status(admitted.error === 'RATE_LIMITED' ? 429 : 400).send({ error: { code: admitted.error } });
  const job = await queue.add('send', { ...body, to: admitted.to });
  return reply.status(202).send({ id: job.id, status: 'queued' });
});
app.post(
  '/v1/messages/batch',
  {
    schema: {
      body: { type: 'object', required: ['messages'], properties: { messages: { type: 'array', maxItems: 1000, items: message } } },
    },
  },
  async (request) => {
    const { messages } = request.body as { messages: Message[] };
    const admitted = await Promise.all(messages.map(admit));
    const jobs = await queue.addBulk(
      admitted.flatMap((result, index) => ('error' in result ? [] : [{ name: 'send', data: { ...messages[index], to: result.to } }])),
    );
    let next = 0;
    return {
      results: admitted.map((result, index) =>
        'error' in result ? { index, error: { code: result.error } } : { index, id: jobs[next++]!.id, status: 'queued' },
      ),
    };
  },
);
const address = await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) });
console.log(`listening ${address}`);
