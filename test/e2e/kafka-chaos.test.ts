import kafka from '../support/brokers/kafka.js';
import { runChaosEndToEnd } from './chaos-suite.js';

runChaosEndToEnd(kafka);
