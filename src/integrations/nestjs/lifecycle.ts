import type { BeforeApplicationShutdown, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { registerHandlers, type DiscoveryTools } from './handler-discovery.js';
import type { SuretyRuntime } from './runtime.js';

/**
 * Nest's hooks for the runtime. Bootstrap runs after every module's `onModuleInit` (so the
 * application's own tables exist) and after every provider is instantiated (so handlers are found).
 * Components stop before Nest closes the HTTP server's peers; the connections close last.
 */
export class SuretyLifecycle implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
  constructor(
    private readonly runtime: SuretyRuntime,
    private readonly tools: DiscoveryTools,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    try {
      registerHandlers(this.tools, this.runtime.consumers);
    } catch (err) {
      await this.runtime.close();
      throw err;
    }
    await this.runtime.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.runtime.stop();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.runtime.close();
  }
}
