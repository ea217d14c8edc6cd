import { EmbeddingProviderError, normalize, type Embedder } from './embedder.js';
import { errorMessage } from '../util/error-message.js';

/**
 * Hosted embedding families. Each speaks its provider's real HTTP API with fetch: OpenAI-compatible (OpenAI, any
 * LiteLLM proxy), Gemini (batchEmbedContents) and Cohere (v2/embed). The dimension is learned by embedding a probe
 * at start unless configured.
 */

interface HostedOptions {
  model: string;
  apiKey: string | undefined;
  apiBase: string;
  dimension: number | undefined;
  timeoutMs?: number;
}

type Call = (texts: readonly string[], kind: 'query' | 'document') => Promise<number[][]>;

async function postJson(
  url: string,
  headers: Record<string, string>,
  body: unknown,
  timeoutMs: number,
): Promise<unknown> {
  let lastError: EmbeddingProviderError | undefined;
  for (let attempt = 0; attempt < 4; attempt++) {
    if (attempt > 0) await new Promise((r) => setTimeout(r, 200 * 2 ** attempt));
    let response: Response;
    try {
      response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      lastError = new EmbeddingProviderError(`embedding provider unreachable at ${url}: ${errorMessage(error)}`, true);
      continue;
    }
    if (response.ok) return response.json();
    const text = (await response.text()).slice(0, 300);
    lastError = new EmbeddingProviderError(
      `embedding provider answered ${response.status} at ${url}: ${text}`,
      response.status === 429 || response.status >= 500,
    );
    if (!lastError.retryable) break;
  }
  throw lastError ?? new EmbeddingProviderError('embedding provider failed', true);
}

function arrayOfVectors(value: unknown, pick: (v: unknown) => unknown): number[][] {
  if (!Array.isArray(value))
    throw new EmbeddingProviderError('embedding provider answered in an unexpected shape', false);
  return value.map((item) => {
    const vector = pick(item);
    if (!Array.isArray(vector) || vector.some((x) => typeof x !== 'number')) {
      throw new EmbeddingProviderError('embedding provider answered a vector that is not a list of numbers', false);
    }
    return vector as number[];
  });
}

function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
}

export function openAiCompatibleCall(o: HostedOptions): Call {
  const url = `${o.apiBase.replace(/\/$/, '')}/embeddings`;
  const headers: Record<string, string> = o.apiKey ? { authorization: `Bearer ${o.apiKey}` } : {};
  return async (texts) => {
    const body: Record<string, unknown> = { model: o.model, input: texts };
    if (o.dimension !== undefined) body.dimensions = o.dimension;
    const json = await postJson(url, headers, body, o.timeoutMs ?? 30_000);
    const data = field(json, 'data');
    const sorted = Array.isArray(data)
      ? [...(data as unknown[])].sort((a, b) => Number(field(a, 'index') ?? 0) - Number(field(b, 'index') ?? 0))
      : data;
    return arrayOfVectors(sorted, (item) => field(item, 'embedding'));
  };
}

export function geminiCall(o: HostedOptions): Call {
  const model = o.model.startsWith('models/') ? o.model : `models/${o.model}`;
  const url = `${o.apiBase.replace(/\/$/, '')}/v1beta/${model}:batchEmbedContents`;
  return async (texts, kind) => {
    const json = await postJson(
      url,
      { 'x-goog-api-key': o.apiKey ?? '' },
      {
        requests: texts.map((text) => ({
          model,
          content: { parts: [{ text }] },
          taskType: kind === 'query' ? 'RETRIEVAL_QUERY' : 'RETRIEVAL_DOCUMENT',
          ...(o.dimension !== undefined ? { outputDimensionality: o.dimension } : {}),
        })),
      },
      o.timeoutMs ?? 30_000,
    );
    return arrayOfVectors(field(json, 'embeddings'), (item) => field(item, 'values'));
  };
}

export function cohereCall(o: HostedOptions): Call {
  const url = `${o.apiBase.replace(/\/$/, '')}/v2/embed`;
  return async (texts, kind) => {
    const json = await postJson(
      url,
      { authorization: `Bearer ${o.apiKey ?? ''}` },
      {
        model: o.model,
        texts,
        input_type: kind === 'query' ? 'search_query' : 'search_document',
        embedding_types: ['float'],
        ...(o.dimension !== undefined ? { output_dimension: o.dimension } : {}),
      },
      o.timeoutMs ?? 30_000,
    );
    return arrayOfVectors(field(field(json, 'embeddings'), 'float'), (item) => item);
  };
}

/** Wraps a provider call as an Embedder, learning the dimension from a probe embedding. */
export async function createHostedEmbedder(id: string, call: Call, maxBatch = 96): Promise<Embedder> {
  const [probe] = await call(['dimension probe'], 'document');
  if (!probe || probe.length === 0) throw new EmbeddingProviderError(`${id} answered an empty embedding`, false);
  const dimension = probe.length;
  return {
    id,
    dimension,
    async embed(texts, kind) {
      const out: Float32Array[] = [];
      for (let i = 0; i < texts.length; i += maxBatch) {
        const vectors = await call(texts.slice(i, i + maxBatch), kind);
        if (vectors.length !== Math.min(maxBatch, texts.length - i)) {
          throw new EmbeddingProviderError(`${id} answered ${vectors.length} vectors for ${texts.length} texts`, false);
        }
        for (const v of vectors) {
          if (v.length !== dimension) {
            throw new EmbeddingProviderError(
              `${id} answered a ${v.length}-dimension vector, expected ${dimension}`,
              false,
            );
          }
          out.push(normalize(Float32Array.from(v)));
        }
      }
      return out;
    },
    async close() {},
  };
}
