// Apache Kafka in KRaft mode (no ZooKeeper), run from its Maven Central artifacts: Maven resolves
// org.apache.kafka:kafka_2.13 and its dependencies into the local Maven repository once, and brokers run from that
// classpath. Used by ensure-services.mjs for the one local broker the tests share, and by the tests that start a
// cluster of their own (test/support/kafka-cluster.ts).
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { run, talk, target, which } from './tools.mjs';

export const KAFKA_VERSION = process.env.SURETY_KAFKA_VERSION || '4.4.0';
const POM = fileURLToPath(new URL('../kafka/pom.xml', import.meta.url));
const LOG4J = fileURLToPath(new URL('../kafka/log4j2.properties', import.meta.url));
const CACHE = join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'surety', `kafka-${KAFKA_VERSION}`);

/**
 * The broker's classpath, resolved by Maven (fetched into the local Maven repository the first time, which takes a
 * minute or two; afterwards it is read from the cache file). Rejects with Maven's own output when it fails.
 */
export async function kafkaClasspath() {
  const file = join(CACHE, 'classpath.txt');
  if (existsSync(file)) {
    const entries = readFileSync(file, 'utf8').trim().split(':');
    if (entries.length > 0 && entries.every((jar) => existsSync(jar))) return entries.join(':');
  }
  const mvn = which('mvn');
  if (!mvn) throw new Error('Kafka runs from its Maven artifacts, but mvn is not installed (apt-get install -y maven)');
  mkdirSync(CACHE, { recursive: true });
  const r = await run(
    mvn,
    [
      '-q',
      '-B',
      '-f',
      POM,
      `-Dkafka.version=${KAFKA_VERSION}`,
      'dependency:build-classpath',
      `-Dmdep.outputFile=${file}`,
    ],
    { timeoutMs: 600_000 },
  );
  if (!r.ok || !existsSync(file))
    throw new Error(`Maven could not resolve Kafka ${KAFKA_VERSION}: ${r.output.slice(-2_000)}`);
  return readFileSync(file, 'utf8').trim();
}

/** The KRaft configuration of one node that is both broker and controller. */
function serverProperties({ nodeId, port, controllerPort, voters, dataDir, replication }) {
  return [
    'process.roles=broker,controller',
    `node.id=${nodeId}`,
    `controller.quorum.voters=${voters}`,
    `listeners=PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}`,
    `advertised.listeners=PLAINTEXT://127.0.0.1:${port}`,
    'controller.listener.names=CONTROLLER',
    'inter.broker.listener.name=PLAINTEXT',
    'listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    `log.dirs=${join(dataDir, 'log')}`,
    `offsets.topic.replication.factor=${replication}`,
    `transaction.state.log.replication.factor=${replication}`,
    `transaction.state.log.min.isr=${Math.min(replication, 2)}`,
    `default.replication.factor=${replication}`,
    'num.partitions=1',
    // Topics are the transport's topology: created on purpose, never by a typo.
    'auto.create.topics.enable=false',
    'group.initial.rebalance.delay.ms=0',
    'unclean.leader.election.enable=false',
    '',
  ].join('\n');
}

/**
 * Starts one KRaft node in the background (it outlives this process) and returns its pid. Its storage is formatted
 * the first time, with `clusterId` (every node of a cluster needs the same one). `heapMb` keeps it small.
 */
export async function startKafkaNode({
  nodeId = 1,
  port = 9092,
  controllerPort = port + 1,
  voters = `${nodeId}@127.0.0.1:${controllerPort}`,
  dataDir,
  clusterId = 'surety-local-kafka-000',
  replication = 1,
  heapMb = 512,
}) {
  const classpath = await kafkaClasspath();
  const java = which('java');
  if (!java) throw new Error('Kafka needs Java (apt-get install -y default-jre-headless)');
  mkdirSync(dataDir, { recursive: true });
  const props = join(dataDir, 'server.properties');
  writeFileSync(props, serverProperties({ nodeId, port, controllerPort, voters, dataDir, replication }));
  const base = ['-cp', classpath, `-Dlog4j2.configurationFile=${LOG4J}`, `-Dkafka.logs.dir=${dataDir}`];
  if (!existsSync(join(dataDir, 'log', 'meta.properties'))) {
    const formatted = await run(
      java,
      [...base, 'kafka.tools.StorageTool', 'format', '-t', clusterIdOf(clusterId), '-c', props],
      {
        timeoutMs: 120_000,
      },
    );
    if (!formatted.ok)
      throw new Error(`formatting Kafka's storage in ${dataDir} failed: ${formatted.output.slice(-2_000)}`);
  }
  const out = openSync(join(dataDir, 'server.out'), 'a');
  const child = spawn(
    java,
    [
      `-Xms${Math.min(256, heapMb)}m`,
      `-Xmx${heapMb}m`,
      '-XX:+UseSerialGC',
      '-Djava.awt.headless=true',
      ...base,
      'kafka.Kafka',
      props,
    ],
    { detached: true, stdio: ['ignore', out, out] },
  );
  closeSync(out);
  child.unref();
  return child.pid;
}

/** A cluster id is 16 bytes, base64url: derive one from a readable name so a cluster's nodes agree. */
function clusterIdOf(name) {
  return Buffer.from(name.padEnd(16, '0').slice(0, 16)).toString('base64url');
}

/**
 * 'up' when the broker answers an ApiVersions request (the first request of every client), else 'down'.
 * @param {string} host
 * @param {number} port
 */
export async function probeKafka(host, port) {
  const clientId = Buffer.from('surety-probe');
  const request = Buffer.alloc(4 + 2 + 2 + 4 + 2 + clientId.length);
  request.writeInt32BE(request.length - 4, 0);
  request.writeInt16BE(18, 4); // ApiVersions
  request.writeInt16BE(0, 6); // version 0
  request.writeInt32BE(0x5e7e7, 8); // correlation id
  request.writeInt16BE(clientId.length, 12);
  clientId.copy(request, 14);
  const reply = await talk(host, port, request, (r) => r.length >= 4 && r.length >= 4 + r.readInt32BE(0));
  if (!reply || reply.length < 10) return 'down';
  return reply.readInt32BE(4) === 0x5e7e7 && reply.readInt16BE(8) === 0 ? 'up' : 'down';
}

/** The one local broker the tests share (SURETY_TEST_KAFKA_BROKERS), started here from the Maven artifacts. */
export function kafka() {
  const t = target('SURETY_TEST_KAFKA_BROKERS', 'kafka://127.0.0.1:9092');
  // Outside the repository: a fresh clone (CI) reuses the broker, and its data, of an earlier run.
  const dataDir = join(tmpdir(), `surety-kafka-${t.port}`);
  return {
    name: 'kafka',
    target: t,
    // The first start resolves Kafka with Maven, which can take a few minutes.
    deadlineMs: 600_000,
    probe: () => probeKafka(t.host, t.port),
    installHint: 'apt-get install -y maven default-jre-headless (Kafka itself comes from Maven Central)',
    logHint: join(dataDir, 'server.out'),
    startHint: `Kafka ${KAFKA_VERSION} (KRaft) from its Maven artifacts, data in ${dataDir}`,
    async start() {
      try {
        const pid = await startKafkaNode({ port: t.port, dataDir });
        return { ok: true, code: 0, output: `pid ${pid}` };
      } catch (error) {
        return { ok: false, code: 1, output: error.message };
      }
    },
  };
}
