/** A provider's SDK and its two clients: one over the retrying fetch, one over the fetch that streams bodies. */
export interface SdkClients<Sdk, Client> {
  sdk: Sdk;
  client: Client;
  /** The same SDK over the fetch that hands bodies on as they arrive (streamed calls). */
  streamingClient: Client;
}

/**
 * The clients, made at the first call: the SDK module loads then rather than with the engine. An SDK is a hundred-odd
 * modules, about 0.2 s of CPU in every process that imports the engine (each start, each test process), and an engine
 * without an LLM never calls it.
 */
export function clientsOnFirstCall<Sdk, Client>(
  load: () => Promise<Sdk>,
  make: (sdk: Sdk, fetchImpl: typeof fetch) => Client,
  fetchImpl: typeof fetch,
  streamFetch: typeof fetch,
): () => Promise<SdkClients<Sdk, Client>> {
  let clients: Promise<SdkClients<Sdk, Client>> | undefined;
  return () => {
    clients ??= load().then((sdk) => ({ sdk, client: make(sdk, fetchImpl), streamingClient: make(sdk, streamFetch) }));
    return clients;
  };
}
