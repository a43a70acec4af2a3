import { ModelRuntime, type ModelRegistry } from "@earendil-works/pi-coding-agent";
import type { Api, Model } from "@earendil-works/pi-ai";

/**
 * Pi 1.6 hands extensions the parent's ModelRegistry, not its ModelRuntime. The registry keeps the
 * runtime in a field named `runtime` (private in the types only). Using that very runtime means a
 * child is answered by every provider, key and login the parent has, including providers
 * registered at run time. This is the one place that reaches for it; a test fails loudly if Pi
 * renames it, and the fallback below keeps children working meanwhile.
 */
export function parentModelRuntime(registry: ModelRegistry): ModelRuntime | undefined {
  const runtime = (registry as unknown as { runtime?: unknown }).runtime;
  return runtime instanceof ModelRuntime ? runtime : undefined;
}

/**
 * The public fallback: a fresh runtime that mirrors the parent's provider for one model and the
 * credentials the parent resolves for it.
 */
export async function mirroredModelRuntime(registry: ModelRegistry, model: Model<Api>): Promise<ModelRuntime> {
  const runtime = await ModelRuntime.create({ modelsPath: null, refreshOnCreate: false });
  const provider = registry.getRegisteredNativeProvider(model.provider) ?? registry.getProvider(model.provider);
  if (provider) runtime.registerNativeProvider(provider);
  const auth = await registry.getApiKeyAndHeaders(model);
  if (auth.ok && auth.apiKey) await runtime.setRuntimeApiKey(model.provider, auth.apiKey);
  return runtime;
}

export async function childModelRuntime(registry: ModelRegistry, model: Model<Api>): Promise<ModelRuntime> {
  return parentModelRuntime(registry) ?? (await mirroredModelRuntime(registry, model));
}
