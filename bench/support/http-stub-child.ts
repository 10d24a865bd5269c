/** The child of `startHttpStub({ inChild: true })`: serves the stub, sends its port, then its count every 5 ms while it changes. */
import type { AddressInfo } from 'node:net';
import { listenStub } from './http-stub.js';

let requests = 0;
let reported = 0;
const server = await listenStub(() => requests++);
process.send?.({ port: (server.address() as AddressInfo).port });
setInterval(() => {
  if (requests === reported) return;
  reported = requests;
  process.send?.({ requests });
}, 5);
process.on('SIGTERM', () => process.exit(0));
