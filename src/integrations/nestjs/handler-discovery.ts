import type { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { InvalidOptionError } from '../../core/errors.js';
import type { Consumer } from '../../consumer/consumer.js';
import type { Handler } from '../../consumer/handler-registry.js';
import { SURETY_HANDLER_METADATA, type SuretyHandlerMetadata } from './handler-decorator.js';

export interface DiscoveryTools {
  readonly discovery: DiscoveryService;
  readonly scanner: MetadataScanner;
  readonly reflector: Reflector;
}

/** Registers every `@SuretyHandler` method of the application's providers on its group's consumer. */
export function registerHandlers(tools: DiscoveryTools, consumers: ReadonlyMap<string, Consumer>): void {
  for (const wrapper of tools.discovery.getProviders()) {
    const instance = wrapper.instance as Record<string, unknown> | undefined;
    if (wrapper.isAlias || !instance || typeof instance !== 'object') continue;
    const prototype = Object.getPrototypeOf(instance) as object | null;
    for (const method of tools.scanner.getAllMethodNames(prototype)) {
      const fn = instance[method];
      if (typeof fn !== 'function') continue;
      const meta = tools.reflector.get<SuretyHandlerMetadata | undefined>(SURETY_HANDLER_METADATA, fn);
      if (!meta) continue;
      const where = `${wrapper.name}.${method}`;
      // One instance for the life of the application: a request-scoped provider has none to call.
      if (!wrapper.isDependencyTreeStatic()) {
        throw new InvalidOptionError(
          `@SuretyHandler on ${where}`,
          'must be on a singleton provider, not a request- or transient-scoped one',
        );
      }
      const consumer = consumers.get(meta.group);
      if (!consumer) {
        throw new InvalidOptionError(
          'SuretyModule.consumers',
          `has no consumer for group "${meta.group}", which @SuretyHandler on ${where} names`,
        );
      }
      const handler: Handler = (payload, context) => (fn as Handler).call(instance, payload, context);
      consumer.on(meta.type, handler, { version: meta.version });
    }
  }
  for (const consumer of consumers.values()) {
    if (consumer.registry.types.length === 0 && !consumer.options.topics) {
      throw new InvalidOptionError(
        'SuretyModule.consumers',
        `group "${consumer.group}" has no @SuretyHandler method: decorate one with { group: '${consumer.group}' }`,
      );
    }
  }
}
