/** The reference peer of the service benchmark: Fastify answering a JSON POST with nothing behind it. */
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.post('/v1/messages', async (_request, reply) => reply.status(202).send({ id: 'x', status: 'queued' }));
const address = await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) });
console.log(`listening ${address}`);
