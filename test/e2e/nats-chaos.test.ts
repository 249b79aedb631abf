import nats from '../support/brokers/nats.js';
import { runChaosEndToEnd } from './chaos-suite.js';

runChaosEndToEnd(nats);
