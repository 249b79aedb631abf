import redis from '../support/brokers/redis.js';
import { runChaosEndToEnd } from './chaos-suite.js';

runChaosEndToEnd(redis);
