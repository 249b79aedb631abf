import rabbitmq from '../support/brokers/rabbitmq.js';
import { runChaosEndToEnd } from './chaos-suite.js';

runChaosEndToEnd(rabbitmq);
