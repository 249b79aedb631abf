import type { DynamicModule, InjectionToken, ModuleMetadata, Provider } from '@nestjs/common';
import type { DiscoveryService, MetadataScanner, ModulesContainer, Reflector } from '@nestjs/core';
import { watchInstantiation } from './instantiation-watch.js';
import { SuretyLifecycle } from './lifecycle.js';
import { nest } from './nest-packages.js';
import type { SuretyModuleOptions } from './module-options.js';
import { SuretyRuntime } from './runtime.js';
import {
  SURETY_CONSUMERS,
  SURETY_OUTBOX,
  SURETY_RELAY,
  SURETY_REPLAY_JOBS,
  SURETY_RUNTIME,
  SURETY_STORE,
  SURETY_TRANSPORT,
  getConsumerToken,
  getReplayJobToken,
} from './tokens.js';

export interface SuretyModuleAsyncOptions extends Pick<ModuleMetadata, 'imports'> {
  useFactory: (...args: never[]) => SuretyModuleOptions | Promise<SuretyModuleOptions>;
  inject?: InjectionToken[];
  /** Groups whose consumer and replay job get a token of their own (the factory's `consumers` must hold them). */
  groups?: readonly string[];
}

const OPTIONS = 'SuretyModuleOptions';

/**
 * Provides the store, transport, outbox, relay, consumers and replay jobs from configuration, starts
 * them at application bootstrap (after `@SuretyHandler` methods are registered) and stops them at
 * shutdown. Global: every module can inject its tokens. Providers are factories with explicit
 * `inject` lists, so nothing here relies on emitted decorator metadata.
 * @example
 * SuretyModule.forRoot({
 *   store: () => createPostgresStore({ connectionString: process.env.DATABASE_URL! }),
 *   transport: () => createRabbitMqTransport({ url: process.env.AMQP_URL!, exchange: 'shop' }),
 *   migrate: true,
 *   consumers: [{ group: 'billing' }],
 * });
 */
@nest.common.Module({})
export class SuretyModule {
  static forRoot(options: SuretyModuleOptions): DynamicModule {
    const groups = (options.consumers ?? []).map((c) => c.group);
    return build([{ provide: OPTIONS, useValue: options }], groups, []);
  }

  static forRootAsync(options: SuretyModuleAsyncOptions): DynamicModule {
    const provider: Provider = { provide: OPTIONS, useFactory: options.useFactory, inject: options.inject ?? [] };
    return build([provider], options.groups ?? [], options.imports ?? []);
  }
}

function build(
  optionProviders: Provider[],
  groups: readonly string[],
  imports: NonNullable<ModuleMetadata['imports']>,
): DynamicModule {
  const fromRuntime = (provide: string, pick: (r: SuretyRuntime) => unknown): Provider => ({
    provide,
    useFactory: pick,
    inject: [SURETY_RUNTIME],
  });
  const exported = [
    fromRuntime(SURETY_STORE, (r) => r.store),
    fromRuntime(SURETY_TRANSPORT, (r) => r.transport),
    fromRuntime(SURETY_OUTBOX, (r) => r.outbox),
    fromRuntime(SURETY_RELAY, (r) => r.relay),
    fromRuntime(SURETY_CONSUMERS, (r) => r.consumers),
    fromRuntime(SURETY_REPLAY_JOBS, (r) => r.replayJobs),
    ...groups.flatMap((group) => [
      fromRuntime(getConsumerToken(group), (r) => r.consumers.get(group)),
      // undefined when the group was configured with `replay: false`
      fromRuntime(getReplayJobToken(group), (r) => r.replayJobs.get(group)),
    ]),
  ];
  return {
    module: SuretyModule,
    global: true,
    imports: [...imports, nest.core.DiscoveryModule],
    providers: [
      ...optionProviders,
      {
        provide: SURETY_RUNTIME,
        useFactory: async (o: SuretyModuleOptions, modules: ModulesContainer) => {
          const runtime = await (await SuretyRuntime.create(o)).requireGroups(groups);
          // Should another provider fail, Nest gives no application to close: close what this one opened.
          watchInstantiation(modules, () => void runtime.close().catch(() => undefined));
          return runtime;
        },
        inject: [OPTIONS, nest.core.ModulesContainer],
      },
      {
        provide: SuretyLifecycle,
        useFactory: (
          runtime: SuretyRuntime,
          discovery: DiscoveryService,
          scanner: MetadataScanner,
          reflector: Reflector,
        ) => new SuretyLifecycle(runtime, { discovery, scanner, reflector }),
        inject: [SURETY_RUNTIME, nest.core.DiscoveryService, nest.core.MetadataScanner, nest.core.Reflector],
      },
      ...exported,
    ],
    exports: exported.map((p) => (p as { provide: string }).provide),
  };
}
